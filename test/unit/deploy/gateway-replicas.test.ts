import { describe, expect, it } from "vitest";
import { STOP_DEADLINE_MS } from "../../../lib/shutdown.js";
import { find } from "./manifests.js";

/** Replicas that must keep serving while one is lost or rolled: one gone still leaves this many. */
const MIN_SERVING = 2;

const gateway = () => find("Deployment", "ahp-gateway");
const podLabels = () => gateway().spec.template.metadata.labels;

describe("the gateway's replicas", () => {
  it("run three or more, rolled one at a time with a new replica ready before an old one stops", () => {
    const { spec } = gateway();
    expect(spec.replicas).toBeGreaterThanOrEqual(3);
    expect(spec.strategy.type).toBe("RollingUpdate");
    expect(spec.strategy.rollingUpdate).toEqual({ maxUnavailable: 0, maxSurge: 1 });
  });

  it("keep at least two serving through voluntary evictions, with a budget that selects exactly the gateway's pods", () => {
    const { spec } = gateway();
    const budget = find("PodDisruptionBudget", "ahp-gateway").spec;
    expect(budget.selector.matchLabels).toEqual(spec.selector.matchLabels);
    expect(podLabels()).toMatchObject(budget.selector.matchLabels);
    const kept = budget.minAvailable ?? spec.replicas - budget.maxUnavailable;
    expect(kept).toBeGreaterThanOrEqual(MIN_SERVING);
    // maxUnavailable keeps a drain possible when the Deployment is scaled down to one replica; minAvailable would block it.
    expect(budget.maxUnavailable).toBe(1);
  });

  it("are reached through a Service that sends each connection to any ready replica, with no session affinity", () => {
    const service = find("Service", "ahp-gateway").spec;
    expect(service.sessionAffinity ?? "None").toBe("None");
    expect(service.sessionAffinityConfig).toBeUndefined();
    expect(service.clusterIP).not.toBe("None");
    expect(podLabels()).toMatchObject(service.selector);
    expect(gateway().spec.template.spec.containers[0].readinessProbe.httpGet.path).toBe("/readyz");
  });

  it("prefer different nodes, without refusing to schedule when there are fewer nodes than replicas", () => {
    const pod = gateway().spec.template.spec;
    const spread = pod.topologySpreadConstraints.find((constraint: { topologyKey: string }) => constraint.topologyKey === "kubernetes.io/hostname");
    expect(spread).toMatchObject({ maxSkew: 1, whenUnsatisfiable: "ScheduleAnyway" });
    expect(podLabels()).toMatchObject(spread.labelSelector.matchLabels);
    for (const constraint of pod.topologySpreadConstraints) expect(constraint.whenUnsatisfiable, constraint.topologyKey).toBe("ScheduleAnyway");
    expect(pod.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution).toBeUndefined();
  });

  it("stop within the grace period: the preStop wait and the gateway's own stop deadline both fit", () => {
    const pod = gateway().spec.template.spec;
    const [program, seconds] = pod.containers[0].lifecycle.preStop.exec.command;
    expect(program).toBe("sleep");
    expect(Number(seconds) + STOP_DEADLINE_MS / 1000).toBeLessThan(pod.terminationGracePeriodSeconds);
  });
});
