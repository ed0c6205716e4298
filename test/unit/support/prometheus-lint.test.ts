import { describe, expect, it } from "vitest";
import { lintPrometheusText } from "../../support/prometheus-lint.js";

describe("lintPrometheusText", () => {
  it("accepts well-formed text", () => {
    const text = [
      "# HELP app_requests_total Requests answered",
      "# TYPE app_requests_total counter",
      'app_requests_total{method="get",code="OK"} 3',
      "# HELP app_call_duration_seconds Time to answer",
      "# TYPE app_call_duration_seconds histogram",
      'app_call_duration_seconds_bucket{le="0.1"} 1',
      "app_call_duration_seconds_sum 0.05",
      "app_call_duration_seconds_count 1",
      "",
    ].join("\n");
    expect(lintPrometheusText(text)).toEqual([]);
  });

  it("flags what promtool flags: _total on a gauge, a counter without it, units, camelCase, missing HELP, duplicates", () => {
    const text = [
      "# HELP app_handles_total Handles",
      "# TYPE app_handles_total gauge",
      "app_handles_total 1",
      "# HELP app_requests Requests",
      "# TYPE app_requests counter",
      "app_requests 1",
      "# HELP app_latency_milliseconds Latency",
      "# TYPE app_latency_milliseconds gauge",
      "app_latency_milliseconds 1",
      "# HELP app_openConnections Connections",
      "# TYPE app_openConnections gauge",
      'app_openConnections{remoteHost="a"} 1',
      "# TYPE app_undocumented gauge",
      "app_undocumented 1",
      "app_unknown 1",
      "# HELP app_requests Requests again",
    ].join("\n");
    expect(lintPrometheusText(text)).toEqual(
      expect.arrayContaining([
        'app_handles_total non-counter metrics should not have "_total" suffix',
        'app_requests counter metrics should have "_total" suffix',
        'app_latency_milliseconds use base unit "seconds" instead of "milliseconds"',
        "app_openConnections metric names should be written in 'snake_case' not 'camelCase'",
        "app_openConnections label names should be written in 'snake_case' not 'camelCase' (remoteHost)",
        "app_undocumented no help text",
        "app_unknown has samples but no HELP or TYPE",
        "app_requests second HELP line",
      ]),
    );
  });
});
