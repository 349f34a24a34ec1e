/**
 * getWeather: current weather and a 3-day forecast for a city, from Open-Meteo (no API key).
 * Rules:
 * - two requests: the geocoding API turns `city` into coordinates (first, best-ranked result),
 *   then the forecast API answers for those coordinates in the place's own time zone;
 * - `units` picks the temperature unit (celsius by default); wind is in km/h;
 * - base URLs come from YIEM_GEOCODING_URL and YIEM_FORECAST_URL (defaults: Open-Meteo), each
 *   request times out after YIEM_WEATHER_TIMEOUT_MS (default 10000), read at every call;
 * - unknown cities, HTTP errors, timeouts, network failures, aborts and malformed answers throw
 *   an Error whose message says which; progress goes to onPartialResult before each request.
 */
import { defineTool, toolResult } from "yiem";
import { envMilliseconds, envUrl, fetchJson } from "./_lib/http.ts";
import { describeWeatherCode } from "./_lib/wmo.ts";

export type TemperatureUnits = "celsius" | "fahrenheit";

export interface GetWeatherArgs {
  city: string;
  units?: TemperatureUnits;
}

export interface WeatherLocation {
  name: string;
  country: string;
  admin1?: string;
  latitude: number;
  longitude: number;
  timezone: string;
}

export interface GetWeatherDetails {
  location: WeatherLocation;
  units: TemperatureUnits;
  current: {
    time: string;
    temperature: number;
    relativeHumidity: number;
    windSpeed: number;
    weatherCode: number;
    conditions: string;
  };
  daily: Array<{ date: string; weatherCode: number; conditions: string; temperatureMin: number; temperatureMax: number }>;
  /** Unit labels as the forecast service reported them, e.g. {temperature: "°C", windSpeed: "km/h"}. */
  unitLabels: { temperature: string; windSpeed: string; relativeHumidity: string };
}

export const DEFAULT_GEOCODING_URL = "https://geocoding-api.open-meteo.com/v1/search";
export const DEFAULT_FORECAST_URL = "https://api.open-meteo.com/v1/forecast";
export const DEFAULT_TIMEOUT_MS = 10_000;
const FORECAST_DAYS = 3;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function num(value: unknown, what: string, service: string): number {
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new Error(`the ${service} returned a response without a valid ${what}`);
  }
  return value;
}

function str(value: unknown, fallback: string): string {
  return typeof value === "string" && value ? value : fallback;
}

async function geocode(city: string, signal: AbortSignal, timeoutMs: number): Promise<WeatherLocation> {
  const service = "geocoding service";
  const url = envUrl("YIEM_GEOCODING_URL", DEFAULT_GEOCODING_URL);
  url.search = new URLSearchParams({ name: city, count: "1", language: "en", format: "json" }).toString();
  const body = await fetchJson(url, { service, signal, timeoutMs });
  const first = isObject(body) && Array.isArray(body.results) ? body.results[0] : undefined;
  if (!isObject(first)) {
    throw new Error(`No place named ${JSON.stringify(city)} was found; check the spelling or add the country ("Paris, France").`);
  }
  return {
    name: str(first.name, city),
    country: str(first.country, str(first.country_code, "")),
    ...(typeof first.admin1 === "string" && first.admin1 ? { admin1: first.admin1 } : {}),
    latitude: num(first.latitude, "latitude", service),
    longitude: num(first.longitude, "longitude", service),
    timezone: str(first.timezone, "unknown"),
  };
}

async function forecast(
  location: WeatherLocation,
  units: TemperatureUnits,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<Omit<GetWeatherDetails, "location" | "units"> & { timezone?: string }> {
  const service = "forecast service";
  const url = envUrl("YIEM_FORECAST_URL", DEFAULT_FORECAST_URL);
  url.search = new URLSearchParams({
    latitude: String(location.latitude),
    longitude: String(location.longitude),
    current: "temperature_2m,relative_humidity_2m,weather_code,wind_speed_10m",
    daily: "weather_code,temperature_2m_max,temperature_2m_min",
    timezone: "auto",
    forecast_days: String(FORECAST_DAYS),
    temperature_unit: units,
  }).toString();
  const body = await fetchJson(url, { service, signal, timeoutMs });
  if (!isObject(body) || !isObject(body.current) || !isObject(body.daily)) {
    throw new Error(`the ${service} returned a response without "current" and "daily" data`);
  }
  const { current, daily } = body;
  const currentUnits = isObject(body.current_units) ? body.current_units : {};
  const currentCode = num(current.weather_code, "current weather_code", service);
  const dates = Array.isArray(daily.time) ? daily.time : [];
  const column = (key: string): unknown[] => (Array.isArray(daily[key]) ? (daily[key] as unknown[]) : []);
  const [codes, maxima, minima] = [column("weather_code"), column("temperature_2m_max"), column("temperature_2m_min")];
  return {
    ...(typeof body.timezone === "string" && body.timezone ? { timezone: body.timezone } : {}),
    current: {
      time: str(current.time, ""),
      temperature: num(current.temperature_2m, "current temperature_2m", service),
      relativeHumidity: num(current.relative_humidity_2m, "current relative_humidity_2m", service),
      windSpeed: num(current.wind_speed_10m, "current wind_speed_10m", service),
      weatherCode: currentCode,
      conditions: describeWeatherCode(currentCode),
    },
    daily: dates.map((date, i) => {
      const code = num(codes[i], "daily weather_code", service);
      return {
        date: str(date, ""),
        weatherCode: code,
        conditions: describeWeatherCode(code),
        temperatureMin: num(minima[i], "daily temperature_2m_min", service),
        temperatureMax: num(maxima[i], "daily temperature_2m_max", service),
      };
    }),
    unitLabels: {
      temperature: str(currentUnits.temperature_2m, units === "fahrenheit" ? "°F" : "°C"),
      windSpeed: str(currentUnits.wind_speed_10m, "km/h"),
      relativeHumidity: str(currentUnits.relative_humidity_2m, "%"),
    },
  };
}

export function placeLabel(location: WeatherLocation): string {
  return [location.name, location.admin1 !== location.name ? location.admin1 : undefined, location.country]
    .filter((part) => part)
    .join(", ");
}

/** The text the model reads. */
export function weatherText(details: GetWeatherDetails): string {
  const { current, daily, unitLabels: u, location } = details;
  const t = (value: number): string => `${value} ${u.temperature}`;
  const lines = [
    `Weather in ${placeLabel(location)} (${location.latitude}, ${location.longitude}; time zone ${location.timezone}):`,
    `Now (${current.time || "latest"}): ${current.conditions}, ${t(current.temperature)}, ` +
      `humidity ${current.relativeHumidity}${u.relativeHumidity}, wind ${current.windSpeed} ${u.windSpeed}.`,
  ];
  if (daily.length > 0) {
    lines.push(`Forecast:`);
    for (const day of daily) {
      lines.push(`- ${day.date}: ${day.conditions}, ${t(day.temperatureMin)} to ${t(day.temperatureMax)}`);
    }
  }
  return lines.join("\n");
}

export default defineTool<GetWeatherArgs, GetWeatherDetails>({
  name: "getWeather",
  label: "Get weather",
  description:
    "Current weather (conditions, temperature, humidity, wind) and a 3-day forecast for a city, from Open-Meteo. " +
    "Add the country to disambiguate (\"Paris, France\"). Needs network access.",
  inputSchema: {
    type: "object",
    properties: {
      city: { type: "string", minLength: 1, description: "City or place name, e.g. \"Berlin\" or \"Portland, Oregon\"." },
      units: {
        type: "string",
        enum: ["celsius", "fahrenheit"],
        default: "celsius",
        description: "Temperature unit.",
      },
    },
    required: ["city"],
    additionalProperties: false,
  },

  validateRequiredArgs(args) {
    if (typeof args.city !== "string" || !args.city.trim()) return '"city" must name a place, e.g. "Berlin"';
    return undefined;
  },

  async execute(_toolCallId, args, signal, onPartialResult) {
    const city = args.city.trim();
    const units: TemperatureUnits = args.units === "fahrenheit" ? "fahrenheit" : "celsius";
    const timeoutMs = envMilliseconds("YIEM_WEATHER_TIMEOUT_MS", DEFAULT_TIMEOUT_MS);

    onPartialResult(`geocoding ${JSON.stringify(city)}…`);
    const location = await geocode(city, signal, timeoutMs);
    onPartialResult(`fetching forecast for ${placeLabel(location)}…`);
    const { timezone, ...weather } = await forecast(location, units, signal, timeoutMs);

    const details: GetWeatherDetails = { location: { ...location, timezone: timezone ?? location.timezone }, units, ...weather };
    return toolResult(weatherText(details), { details });
  },
});
