/** Kept for tests written against the old layout: the helpers live in test/support/. */
export * from "../support/cli.js";
