/** Reading a Dockerfile in tests (Docker itself does not run here). */

export interface DockerInstruction {
  keyword: string;
  args: string;
  stage: number;
}

/** Dockerfile instructions with line continuations joined and comments dropped; `stage` counts FROMs. */
export function dockerInstructions(text: string): DockerInstruction[] {
  const joined = text.replace(/\\\r?\n/g, ' ');
  const out: DockerInstruction[] = [];
  let stage = -1;
  for (const line of joined.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (!trimmed || trimmed.startsWith('#')) continue;
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(trimmed) ?? [];
    if (keyword.toUpperCase() === 'FROM') stage += 1;
    out.push({ keyword: keyword.toUpperCase(), args: args.replace(/\s+/g, ' '), stage });
  }
  return out;
}

/** The exec-form array of CMD/ENTRYPOINT/HEALTHCHECK CMD (shell form is refused: no sh as PID 1). */
export function execForm(args: string): string[] {
  const parsed = JSON.parse(args) as unknown;
  if (!Array.isArray(parsed) || !parsed.every((a) => typeof a === 'string')) throw new Error(`not exec form: ${args}`);
  return parsed;
}
