/**
 * The stand-in for the prompt word `-` between argument parsing and `yiem run` (see
 * splitAtDashes in ./main.ts). Kept in its own tiny module: main.ts loads it at start-up.
 */
export const STDIN_MARK = "\u0000stdin\u0000";
