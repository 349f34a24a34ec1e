/**
 * The longest line a batch input may have, in bytes: a longer line is a bad line (./input.ts),
 * skipped without being held (./lines.ts), and no cut between two lines is looked for further
 * (./range-plan.ts). A module of its own so that the start bundle can know it without the reader.
 */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;
