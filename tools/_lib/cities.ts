/**
 * City name → IANA time zone, offline, from the `city-timezones` package (about 7,300 cities
 * with country, province and population; 1.9 MB of JSON, so it is imported on first use only).
 * Rules:
 * - names match case- and accent-insensitively ("sao paulo" finds "São Paulo");
 * - "City, Qualifier" keeps only matches whose country, province, state or ISO code equals the
 *   qualifier ("Springfield, Illinois", "Springfield, MO", "London, GB"; a few common country
 *   names such as "UK" and "United States" are mapped to their ISO code);
 * - among several matches the most populous wins; the others are returned as alternatives,
 *   one per (city, province, country), most populous first;
 * - entries without a zone the runtime knows are ignored.
 */

export interface CityMatch {
  city: string;
  country: string;
  province: string;
  iso2: string;
  timezone: string;
  population: number;
}

export interface CityResolution {
  best: CityMatch;
  alternatives: CityMatch[];
}

interface CityRecord {
  city: string;
  city_ascii?: string;
  country: string;
  province?: string;
  state_ansi?: string;
  iso2?: string;
  iso3?: string;
  timezone: string | null;
  pop: number;
}

let cityList: Promise<CityRecord[]> | undefined;

/** The package's city list, imported once. */
function loadCities(): Promise<CityRecord[]> {
  cityList ??= import("city-timezones").then((mod) => {
    const lib = mod as unknown as { cityMapping?: CityRecord[]; default?: { cityMapping?: CityRecord[] } };
    const list = lib.cityMapping ?? lib.default?.cityMapping;
    if (!Array.isArray(list)) throw new Error("the city-timezones package has no city list");
    return list;
  });
  return cityList;
}

/** Lower case, accents removed, spaces collapsed. */
export function foldName(text: string): string {
  // Almost every name is ASCII, which has no accents to remove: normalising ~15,000 names on
  // each lookup was most of its time.
  const ascii = NON_ASCII.test(text) ? text.normalize("NFD").replace(/\p{M}/gu, "") : text;
  return ascii.toLowerCase().replace(/\s+/g, " ").trim();
}

const NON_ASCII = /[^\x00-\x7f]/;

/** Resolves `query`, or returns undefined when no city matches. */
export async function resolveCity(
  query: string,
  isKnownZone: (zone: string) => boolean,
): Promise<CityResolution | undefined> {
  const [namePart, ...rest] = query.split(",");
  const name = foldName(namePart ?? "");
  const qualifier = foldName(rest.join(","));
  if (!name) return undefined;
  const cities = await loadCities();
  const matches = cities.filter(
    (c) =>
      typeof c.timezone === "string" &&
      (foldName(c.city) === name || (c.city_ascii !== undefined && foldName(c.city_ascii) === name)) &&
      (!qualifier || matchesQualifier(c, qualifier)) &&
      isKnownZone(c.timezone),
  );
  const unique = dedupe(matches.map(toMatch)).sort((a, b) => b.population - a.population);
  const [best, ...alternatives] = unique;
  return best ? { best, alternatives } : undefined;
}

/** Everyday country names that differ from the data's names, mapped to ISO 3166 alpha-2. */
const COUNTRY_ALIASES: Record<string, string> = {
  uk: "gb",
  britain: "gb",
  "great britain": "gb",
  england: "gb",
  "united states": "us",
  america: "us",
};

function matchesQualifier(c: CityRecord, qualifier: string): boolean {
  const wanted = COUNTRY_ALIASES[qualifier] ?? qualifier;
  return [c.country, c.province, c.state_ansi, c.iso2, c.iso3].some(
    (field) => typeof field === "string" && foldName(field) === wanted,
  );
}

function toMatch(c: CityRecord): CityMatch {
  return {
    city: c.city,
    country: c.country,
    province: c.province ?? "",
    iso2: c.iso2 ?? "",
    timezone: c.timezone as string,
    population: Math.round(c.pop),
  };
}

/** One entry per (city, province, country), keeping the most populous. */
function dedupe(matches: CityMatch[]): CityMatch[] {
  const byKey = new Map<string, CityMatch>();
  for (const m of matches) {
    const key = `${m.city}|${m.province}|${m.country}`;
    const seen = byKey.get(key);
    if (!seen || m.population > seen.population) byKey.set(key, m);
  }
  return [...byKey.values()];
}
