import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { PartialToolResult } from "yiem";
import getWeather, { type GetWeatherDetails } from "../../tools/getWeather.ts";

/** What the stub does for one path; `hang` never answers. */
type Route = (req: IncomingMessage, res: ServerResponse, url: URL) => void;

const routes = new Map<string, Route>();
const requests: URL[] = [];
let server: Server;
let base = "";
const savedEnv = { ...process.env };

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json", connection: "close" });
  res.end(JSON.stringify(body));
}

const berlin = {
  results: [
    { id: 2950159, name: "Berlin", latitude: 52.52437, longitude: 13.41053, country: "Germany", admin1: "Land Berlin", timezone: "Europe/Berlin" },
  ],
};

function forecastBody(unit: "°C" | "°F", temps: number[]): unknown {
  return {
    latitude: 52.52,
    longitude: 13.41,
    timezone: "Europe/Berlin",
    current_units: { time: "iso8601", temperature_2m: unit, relative_humidity_2m: "%", weather_code: "wmo code", wind_speed_10m: "km/h" },
    current: { time: "2026-11-30T10:45", temperature_2m: temps[0], relative_humidity_2m: 81, weather_code: 3, wind_speed_10m: 12.5 },
    daily_units: { time: "iso8601", weather_code: "wmo code", temperature_2m_max: unit, temperature_2m_min: unit },
    daily: {
      time: ["2026-11-30", "2026-12-01", "2026-12-02"],
      weather_code: [3, 61, 71],
      temperature_2m_max: [temps[1], temps[2], temps[3]],
      temperature_2m_min: [temps[4], temps[5], temps[6]],
    },
  };
}

const okGeocoding: Route = (_req, res) => json(res, 200, berlin);
const okForecast: Route = (_req, res, url) =>
  url.searchParams.get("temperature_unit") === "fahrenheit"
    ? json(res, 200, forecastBody("°F", [40.1, 42.8, 39.2, 35.6, 33.8, 34.5, 28.4]))
    : json(res, 200, forecastBody("°C", [4.5, 6, 4, 2, 1, 1.4, -2]));
const hang: Route = () => {};

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    requests.push(url);
    const route = routes.get(url.pathname);
    if (route) route(req, res, url);
    else json(res, 404, { error: true, reason: "no such path" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  // The variables, not the object: a replaced process.env no longer reaches the real environment.
  for (const name of ["YIEM_GEOCODING_URL", "YIEM_FORECAST_URL", "YIEM_WEATHER_TIMEOUT_MS"]) {
    if (savedEnv[name] === undefined) delete process.env[name];
    else process.env[name] = savedEnv[name];
  }
});

afterEach(() => {
  routes.clear();
  requests.length = 0;
  server.closeAllConnections();
});

function useStub(geocoding: Route, forecast: Route, timeoutMs?: number): void {
  routes.set("/v1/search", geocoding);
  routes.set("/v1/forecast", forecast);
  process.env.YIEM_GEOCODING_URL = `${base}/v1/search`;
  process.env.YIEM_FORECAST_URL = `${base}/v1/forecast`;
  if (timeoutMs === undefined) delete process.env.YIEM_WEATHER_TIMEOUT_MS;
  else process.env.YIEM_WEATHER_TIMEOUT_MS = String(timeoutMs);
}

async function run(args: { city: string; units?: "celsius" | "fahrenheit" }, signal = new AbortController().signal) {
  const partials: PartialToolResult[] = [];
  const result = await getWeather.execute("call-1", args, signal, (p) => partials.push(p));
  return { result, partials, details: result.details as GetWeatherDetails };
}

describe("getWeather against a stub Open-Meteo", () => {
  it("reports current weather and a 3-day forecast in celsius by default", async () => {
    useStub(okGeocoding, okForecast);
    const { result, details } = await run({ city: "Berlin" });

    const geocodingRequest = requests.find((u) => u.pathname === "/v1/search");
    expect(geocodingRequest?.searchParams.get("name")).toBe("Berlin");
    expect(geocodingRequest?.searchParams.get("count")).toBe("1");
    const forecastRequest = requests.find((u) => u.pathname === "/v1/forecast");
    expect(forecastRequest?.searchParams.get("latitude")).toBe("52.52437");
    expect(forecastRequest?.searchParams.get("longitude")).toBe("13.41053");
    expect(forecastRequest?.searchParams.get("temperature_unit")).toBe("celsius");
    expect(forecastRequest?.searchParams.get("forecast_days")).toBe("3");
    expect(forecastRequest?.searchParams.get("timezone")).toBe("auto");
    expect(forecastRequest?.searchParams.get("current")).toBe("temperature_2m,relative_humidity_2m,weather_code,wind_speed_10m");
    expect(forecastRequest?.searchParams.get("daily")).toBe("weather_code,temperature_2m_max,temperature_2m_min");

    expect(details.units).toBe("celsius");
    expect(details.location).toEqual({
      name: "Berlin",
      country: "Germany",
      admin1: "Land Berlin",
      latitude: 52.52437,
      longitude: 13.41053,
      timezone: "Europe/Berlin",
    });
    expect(details.current).toMatchObject({ temperature: 4.5, relativeHumidity: 81, windSpeed: 12.5, conditions: "overcast" });
    expect(details.daily.map((d) => [d.date, d.conditions, d.temperatureMin, d.temperatureMax])).toEqual([
      ["2026-11-30", "overcast", 1, 6],
      ["2026-12-01", "slight rain", 1.4, 4],
      ["2026-12-02", "slight snowfall", -2, 2],
    ]);
    const text = result.content[0]?.type === "text" ? result.content[0].text : "";
    expect(text).toContain("Weather in Berlin, Land Berlin, Germany");
    expect(text).toContain("overcast, 4.5 °C, humidity 81%, wind 12.5 km/h");
    expect(text).toContain("- 2026-12-01: slight rain, 1.4 °C to 4 °C");
  });

  it("asks for fahrenheit and reports it", async () => {
    useStub(okGeocoding, okForecast);
    const { result, details } = await run({ city: "Berlin", units: "fahrenheit" });

    const forecastRequest = requests.find((u) => u.pathname === "/v1/forecast");
    expect(forecastRequest?.searchParams.get("temperature_unit")).toBe("fahrenheit");
    expect(details.units).toBe("fahrenheit");
    expect(details.current.temperature).toBe(40.1);
    expect(details.unitLabels.temperature).toBe("°F");
    const text = result.content[0]?.type === "text" ? result.content[0].text : "";
    expect(text).toContain("40.1 °F");
    expect(text).not.toContain("°C");
  });

  it("reports progress before each request, in order", async () => {
    useStub(okGeocoding, okForecast);
    const { partials } = await run({ city: "Berlin" });
    expect(partials).toEqual(['geocoding "Berlin"…', "fetching forecast for Berlin, Land Berlin, Germany…"]);
  });

  it("fails clearly for an unknown city and never asks for a forecast", async () => {
    useStub((_req, res) => json(res, 200, { generationtime_ms: 0.2 }), okForecast);
    await expect(run({ city: "Xyzzyville" })).rejects.toThrow(/No place named "Xyzzyville" was found/);
    expect(requests.some((u) => u.pathname === "/v1/forecast")).toBe(false);
  });

  it("names the HTTP status when the forecast service answers 500", async () => {
    useStub(okGeocoding, (_req, res) => json(res, 500, { error: true, reason: "database on fire" }));
    await expect(run({ city: "Berlin" })).rejects.toThrow(/forecast service answered HTTP 500 Internal Server Error: database on fire/);
  });

  it("names the HTTP status when the geocoding service answers 500 without a body", async () => {
    useStub((_req, res) => {
      res.writeHead(500, { connection: "close" });
      res.end();
    }, okForecast);
    await expect(run({ city: "Berlin" })).rejects.toThrow(/geocoding service answered HTTP 500/);
  });

  it("times out a server that never answers", async () => {
    useStub(hang, okForecast, 150);
    await expect(run({ city: "Berlin" })).rejects.toThrow("request to the geocoding service timed out after 150 ms");
    expect(requests.some((u) => u.pathname === "/v1/forecast")).toBe(false);
  });

  it("stops with an 'aborted' error when the signal aborts mid-request", async () => {
    const controller = new AbortController();
    useStub(okGeocoding, () => controller.abort(), 30_000);
    await expect(run({ city: "Berlin" }, controller.signal)).rejects.toThrow("request to the forecast service was aborted");
  });

  it("does not send a request when the signal is already aborted", async () => {
    useStub(okGeocoding, okForecast);
    const controller = new AbortController();
    controller.abort();
    await expect(run({ city: "Berlin" }, controller.signal)).rejects.toThrow(/aborted/);
    expect(requests).toEqual([]);
  });

  it("reports a network failure with the service and its origin", async () => {
    useStub(okGeocoding, okForecast);
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    process.env.YIEM_GEOCODING_URL = `http://127.0.0.1:${port}/v1/search`;
    await expect(run({ city: "Berlin" })).rejects.toThrow(`could not reach the geocoding service at http://127.0.0.1:${port}`);
  });

  it("rejects a malformed forecast", async () => {
    useStub(okGeocoding, (_req, res) => json(res, 200, { current: { temperature_2m: "warm" }, daily: {} }));
    await expect(run({ city: "Berlin" })).rejects.toThrow(/forecast service returned a response without a valid/);
  });

  it("validates the city and declares a celsius default in its schema", () => {
    expect(getWeather.validateRequiredArgs?.({ city: "  " })).toMatch(/"city" must name a place/);
    expect(getWeather.validateRequiredArgs?.({ city: "Oslo" })).toBeUndefined();
    const units = (getWeather.inputSchema.properties as Record<string, { default?: string; enum?: string[] }>).units;
    expect(units).toEqual(expect.objectContaining({ default: "celsius", enum: ["celsius", "fahrenheit"] }));
    expect(getWeather.inputSchema.required).toEqual(["city"]);
  });
});
