/**
 * getTime: the current local time for an IANA time zone or a city, offline.
 * Rules:
 * - at least one of `timezone` and `city`; with both, `timezone` decides and `city` only labels;
 * - `timezone` must be an IANA name in Area/Location form ("Asia/Tokyo", "America/Argentina/Salta")
 *   or "UTC"/"GMT", and one this runtime knows; POSIX-style names such as "EST5EDT" are refused;
 * - a city is looked up in the offline `city-timezones` list; the most populous match wins and
 *   every other match is reported in `details.alternatives` and named in the text;
 * - the time is read once per call from the system clock (`Date`), so fake timers fix it in tests.
 */
import { defineTool, toolResult } from "yiem";
import { resolveCity, type CityMatch } from "./_lib/cities.ts";

export interface GetTimeArgs {
  timezone?: string;
  city?: string;
}

export interface GetTimeAlternative {
  city: string;
  province: string;
  country: string;
  timezone: string;
  population: number;
}

export interface GetTimeDetails {
  timezone: string;
  matchedBy: "city" | "timezone";
  city?: string;
  country?: string;
  province?: string;
  population?: number;
  alternatives: GetTimeAlternative[];
  /** Local time with its offset, e.g. "2026-11-30T10:49:05+09:00". */
  iso: string;
  /** e.g. "UTC+09:00". */
  utcOffset: string;
}

const IANA_FORM = /^[A-Za-z]+(?:[_-][A-Za-z]+)*(?:\/[A-Za-z0-9]+(?:[_+-][A-Za-z0-9]+)*)+$/;
const BARE_ZONES = new Set(["utc", "gmt"]);
/** How many alternatives the text names; `details` has them all. */
const ALTERNATIVES_IN_TEXT = 5;

let supportedZones: Set<string> | undefined;

/** True when the runtime's Intl knows `zone` (canonical names and their legacy links). */
export function isKnownZone(zone: string): boolean {
  supportedZones ??= new Set(Intl.supportedValuesOf("timeZone"));
  if (supportedZones.has(zone)) return true;
  try {
    new Intl.DateTimeFormat(undefined, { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** Why `zone` is not usable, or undefined when it is. */
export function timezoneProblem(zone: string): string | undefined {
  const shown = JSON.stringify(zone);
  if (!BARE_ZONES.has(zone.toLowerCase()) && !IANA_FORM.test(zone)) {
    return (
      `timezone ${shown} is not an IANA time zone name: use Area/Location form such as ` +
      `"Europe/Paris" or "America/New_York", or "UTC". To look up a place by name, pass it as "city" instead`
    );
  }
  if (!isKnownZone(zone)) {
    return `timezone ${shown} is not a time zone this runtime knows; use an IANA name such as "Asia/Tokyo" or "UTC"`;
  }
  return undefined;
}

function clean(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() ? value.trim() : undefined;
}

/** The date and time in `timeZone`, as text, an ISO string with offset, and the offset. */
export function formatInZone(date: Date, timeZone: string): { text: string; iso: string; utcOffset: string } {
  const parts = (options: Intl.DateTimeFormatOptions): Record<string, string> =>
    Object.fromEntries(
      new Intl.DateTimeFormat("en-GB", { timeZone, ...options }).formatToParts(date).map((p) => [p.type, p.value]),
    );
  const clock = { hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" } as const;
  const words = parts({ weekday: "long", day: "numeric", month: "long", year: "numeric", ...clock });
  const digits = parts({ day: "2-digit", month: "2-digit", year: "numeric", ...clock });
  const offsetName = parts({ timeZoneName: "longOffset" }).timeZoneName ?? "GMT";
  const offset = offsetName === "GMT" ? "+00:00" : offsetName.replace(/^GMT/, "");
  const time = `${words.hour}:${words.minute}:${words.second}`;
  return {
    text: `${words.weekday} ${words.day} ${words.month} ${words.year}, ${time}`,
    iso: `${digits.year}-${digits.month}-${digits.day}T${digits.hour}:${digits.minute}:${digits.second}${offset}`,
    utcOffset: `UTC${offset}`,
  };
}

/**
 * "Springfield, Massachusetts, United States of America": the province only when it tells
 * same-named places of one country apart, or when the caller narrowed by it.
 */
function placeName(match: CityMatch, others: CityMatch[], narrowed = false): string {
  const sameCountry = narrowed || others.some((o) => o.country === match.country);
  const province = sameCountry && match.province && match.province !== match.city ? `, ${match.province}` : "";
  return `${match.city}${province}, ${match.country}`;
}

function alternativesText(best: CityMatch, alternatives: CityMatch[]): string {
  if (alternatives.length === 0) return "";
  const everyone = [best, ...alternatives];
  const named = alternatives
    .slice(0, ALTERNATIVES_IN_TEXT)
    .map((alt) => `${placeName(alt, everyone.filter((o) => o !== alt))} (${alt.timezone})`);
  const more = alternatives.length > ALTERNATIVES_IN_TEXT ? ` and ${alternatives.length - ALTERNATIVES_IN_TEXT} more` : "";
  return `\nChosen as the most populous of ${everyone.length} places named ${best.city}; others: ${named.join("; ")}${more}.`;
}

export default defineTool<GetTimeArgs, GetTimeDetails>({
  name: "getTime",
  label: "Get time",
  description:
    "Current local date and time for an IANA time zone (e.g. \"Asia/Tokyo\") or a city (e.g. \"Tokyo\", " +
    "\"Springfield, Illinois\"). Works offline. Ambiguous city names resolve to the most populous place; " +
    "the others are listed so you can ask the user.",
  inputSchema: {
    type: "object",
    properties: {
      timezone: { type: "string", description: "IANA time zone name, e.g. \"Europe/Paris\" or \"UTC\"." },
      city: {
        type: "string",
        description: "City name, optionally with \", country or state\" to disambiguate, e.g. \"London, Canada\".",
      },
    },
    additionalProperties: false,
  },

  validateRequiredArgs(args) {
    const timezone = clean(args.timezone);
    if (!timezone && !clean(args.city)) {
      return 'Give "timezone" (an IANA name such as "Asia/Tokyo") or "city" (such as "Tokyo"); both are missing';
    }
    return timezone ? timezoneProblem(timezone) : undefined;
  },

  async execute(_toolCallId, args, signal) {
    if (signal.aborted) throw new Error("getTime was aborted");
    const timezoneArg = clean(args.timezone);
    const cityArg = clean(args.city);
    const now = new Date();

    if (timezoneArg) {
      const problem = timezoneProblem(timezoneArg);
      if (problem) throw new Error(problem);
      const timezone = new Intl.DateTimeFormat("en-GB", { timeZone: timezoneArg }).resolvedOptions().timeZone;
      const when = formatInZone(now, timezone);
      const label = cityArg ? `${cityArg} (${timezone})` : timezone;
      return toolResult(`${label}: ${when.text} (${when.utcOffset})`, {
        details: { timezone, matchedBy: "timezone", alternatives: [], iso: when.iso, utcOffset: when.utcOffset },
      });
    }
    if (!cityArg) throw new Error('Give "timezone" or "city"; both are missing.');

    const resolution = await resolveCity(cityArg, isKnownZone);
    if (!resolution) {
      throw new Error(
        `No city named ${JSON.stringify(cityArg)} in the offline city list. Try the nearest large city, ` +
          `drop or fix the ", country" part, or pass an IANA "timezone" such as "Europe/Paris".`,
      );
    }
    const { best, alternatives } = resolution;
    const when = formatInZone(now, best.timezone);
    const name = placeName(best, alternatives, cityArg.includes(","));
    return toolResult(`${name} (${best.timezone}): ${when.text} (${when.utcOffset})${alternativesText(best, alternatives)}`, {
      details: {
        timezone: best.timezone,
        matchedBy: "city",
        city: best.city,
        country: best.country,
        province: best.province,
        population: best.population,
        alternatives: alternatives.map(({ city, province, country, timezone, population }) => ({
          city,
          province,
          country,
          timezone,
          population,
        })),
        iso: when.iso,
        utcOffset: when.utcOffset,
      },
    });
  },
});
