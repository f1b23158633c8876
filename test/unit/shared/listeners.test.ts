import { Listeners } from '../../../src/shared/listeners';

describe('Listeners', () => {
  it('tells every listener in turn, skips one that throws without failing the emitter, and stops telling a removed one', () => {
    const listeners = new Listeners<number>();
    const heard: string[] = [];
    listeners.add((n) => heard.push(`a${n}`));
    const removeFaulty = listeners.add(() => {
      throw new Error('a metrics fault');
    });
    const removeC = listeners.add((n) => heard.push(`c${n}`));
    expect(() => listeners.emit(1)).not.toThrow();
    removeFaulty();
    removeC();
    listeners.emit(2);
    expect(heard).toEqual(['a1', 'c1', 'a2']);
  });
});
