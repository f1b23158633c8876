/** ISO 8601 without a zone designator, in UTC, as the legacy interface writes timestamps. */
export function formatTimestamp(date: Date | null | undefined): string | null {
  if (!date) return null;
  return date.toISOString().slice(0, -1);
}
