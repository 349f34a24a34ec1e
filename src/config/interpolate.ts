/** Interpolation lives in ../interpolate.ts (command tools use the same rule); re-exported for config-side callers. */
export { InterpolationError, interpolateEnvMap, interpolateString, interpolateValue } from "../interpolate.js";
