import { createClient, createRouterTransport } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../../gen/grpc/health/v1/health_pb.js";
import { createHealthService, ServingState } from "../../../services/runner/rpc/health-service.js";
import { codeOf } from "../../support/connect-code.js";

describe("grpc.health.v1 on the runner", () => {
  it("serves until shutdown begins, then says NOT_SERVING, to Check and to a Watch already open", async () => {
    const state = new ServingState();
    const health = createClient(Health, createRouterTransport((router) => router.service(Health, createHealthService(state))));
    expect((await health.check({})).status).toBe(Status.SERVING);
    const watch = health.watch({ service: "terminal.v1.TerminalService" })[Symbol.asyncIterator]();
    expect((await watch.next()).value.status).toBe(Status.SERVING);
    state.stopServing();
    expect((await watch.next()).value.status).toBe(Status.NOT_SERVING);
    expect((await health.check({ service: "terminal.v1.TerminalService" })).status).toBe(Status.NOT_SERVING);
    await watch.return?.();
  });

  it("answers NOT_FOUND to Check and SERVICE_UNKNOWN to Watch for a service it does not have", async () => {
    const health = createClient(Health, createRouterTransport((router) => router.service(Health, createHealthService(new ServingState()))));
    expect(await codeOf(health.check({ service: "nope" }))).toBe(5);
    const first = await health.watch({ service: "nope" })[Symbol.asyncIterator]().next();
    expect(first.value.status).toBe(Status.SERVICE_UNKNOWN);
  });
});
