import type { Subsidiary } from './subsidiary.entity';

export function subsidiaryView(s: Subsidiary) {
  return { id: s.id, name: s.name, country: s.country, supportEmail: s.supportEmail, customization: s.customization ?? null };
}
