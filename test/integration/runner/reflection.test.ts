import { createFileRegistry, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, FileDescriptorSetSchema, type FileDescriptorProto } from "@bufbuild/protobuf/wkt";
import { create } from "@bufbuild/protobuf";
import { Code, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { describe, expect, it } from "vitest";
import { ServerReflection, type ServerReflectionRequest, type ServerReflectionResponse } from "../../../gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ServerReflectionV1Alpha } from "../../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { codeOf } from "../../support/connect-code.js";
import { startTestRunner, useTestRunner, type TestRunner } from "./harness.js";

const runner = useTestRunner();
const open = useTestRunner({ openReflection: true });

type Question = ServerReflectionRequest["messageRequest"];

function reflectionClient(target: TestRunner, token?: string): Client<typeof ServerReflection> {
  return createClient(ServerReflection, createGrpcTransport({
    baseUrl: target.server.url,
    interceptors: [(next) => (request) => {
      if (token !== undefined) request.header.set("authorization", `Bearer ${token}`);
      return next(request);
    }],
  }));
}

/** Asks every question on one stream and returns the answers in order. */
async function ask(client: Client<typeof ServerReflection>, ...questions: Question[]): Promise<ServerReflectionResponse[]> {
  async function* requests() {
    for (const messageRequest of questions) yield { host: "runner", messageRequest };
  }
  const answers: ServerReflectionResponse[] = [];
  for await (const answer of client.serverReflectionInfo(requests())) answers.push(answer);
  return answers;
}

function filesOf(answer: ServerReflectionResponse | undefined): FileDescriptorProto[] {
  if (answer?.messageResponse.case !== "fileDescriptorResponse") throw new Error(`not files: ${answer?.messageResponse.case}`);
  return answer.messageResponse.value.fileDescriptorProto.map((bytes) => fromBinary(FileDescriptorProtoSchema, bytes));
}

describe("gRPC server reflection", () => {
  it("lists every service served, reflection included", async () => {
    const [answer] = await ask(reflectionClient(runner, runner.token), { case: "listServices", value: "" });
    expect(answer?.validHost).toBe("runner");
    expect(answer?.originalRequest?.messageRequest.case).toBe("listServices");
    expect(answer?.messageResponse).toMatchObject({ case: "listServicesResponse" });
    const names = answer?.messageResponse.case === "listServicesResponse" ? answer.messageResponse.value.service.map((s) => s.name) : [];
    expect(names.sort()).toEqual(["grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection", "terminal.v1.TerminalService"]);
  });

  it("answers a file by name with its transitive dependencies, enough to rebuild every type", async () => {
    const [answer] = await ask(reflectionClient(runner, runner.token), { case: "fileByFilename", value: "terminal/v1/terminal.proto" });
    const files = filesOf(answer);
    expect(files.map((file) => file.name)).toEqual(["terminal/v1/terminal.proto", "google/protobuf/timestamp.proto"]);
    // A descriptor set lists imports first.
    const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: [...files].reverse() }));
    expect(registry.getService("terminal.v1.TerminalService")?.methods.map((m) => m.name)).toContain("Spawn");
    expect(registry.getMessage("terminal.v1.SpawnRequest")?.fields.find((f) => f.name === "cols")?.proto.proto3Optional).toBe(true);
  });

  it("finds the file of a service, a method, a message, a oneof, a field, a map entry, an enum and an enum value", async () => {
    const symbols = [
      "terminal.v1.TerminalService",
      "terminal.v1.TerminalService.Attach",
      "terminal.v1.AttachResponse",
      "terminal.v1.AttachResponse.event",
      "terminal.v1.SpawnRequest.cols",
      "terminal.v1.TerminalInfo.LabelsEntry",
      "terminal.v1.SignalTarget",
      "terminal.v1.SIGNAL_TARGET_GROUP",
    ];
    const answers = await ask(reflectionClient(runner, runner.token), ...symbols.map((value) => ({ case: "fileContainingSymbol" as const, value })));
    expect(answers).toHaveLength(symbols.length);
    for (const answer of answers) expect(filesOf(answer)[0]?.name).toBe("terminal/v1/terminal.proto");
    const [health] = await ask(reflectionClient(runner, runner.token), { case: "fileContainingSymbol", value: "grpc.health.v1.Health.Check" });
    expect(filesOf(health).map((file) => file.name)).toEqual(["grpc/health/v1/health.proto"]);
    const [timestamp] = await ask(reflectionClient(runner, runner.token), { case: "fileContainingSymbol", value: "google.protobuf.Timestamp" });
    expect(filesOf(timestamp).map((file) => file.name)).toEqual(["google/protobuf/timestamp.proto"]);
  });

  it("answers unknown names with NOT_FOUND and an empty question with INVALID_ARGUMENT, and keeps the stream open", async () => {
    const answers = await ask(
      reflectionClient(runner, runner.token),
      { case: "fileByFilename", value: "nope.proto" },
      { case: "fileContainingSymbol", value: "terminal.v1.Nope" },
      { case: "fileContainingSymbol", value: "terminal.v1.TerminalService.Nope" },
      { case: "fileContainingExtension", value: { $typeName: "grpc.reflection.v1.ExtensionRequest", containingType: "terminal.v1.SpawnRequest", extensionNumber: 100 } },
      { case: "allExtensionNumbersOfType", value: "terminal.v1.Nope" },
      { case: undefined },
      { case: "allExtensionNumbersOfType", value: "terminal.v1.SpawnRequest" },
    );
    const errors = answers.slice(0, 6).map((answer) => (answer.messageResponse.case === "errorResponse" ? answer.messageResponse.value : undefined));
    expect(errors.map((error) => error?.errorCode)).toEqual([Code.NotFound, Code.NotFound, Code.NotFound, Code.NotFound, Code.NotFound, Code.InvalidArgument]);
    expect(errors[0]?.errorMessage).toBe('file "nope.proto" not found');
    expect(answers[6]?.messageResponse).toMatchObject({ case: "allExtensionNumbersResponse", value: { baseTypeName: "terminal.v1.SpawnRequest", extensionNumber: [] } });
  });

  it("speaks the older v1alpha protocol too", async () => {
    const client = createClient(ServerReflectionV1Alpha, createGrpcTransport({ baseUrl: runner.server.url }));
    async function* requests() {
      yield { messageRequest: { case: "listServices" as const, value: "" } };
    }
    const answers = [];
    for await (const answer of client.serverReflectionInfo(requests(), { headers: { authorization: `Bearer ${runner.token}` } })) answers.push(answer);
    expect(answers[0]?.messageResponse.case).toBe("listServicesResponse");
  });

  it("needs the token unless the runner opens it; health and the terminal service stay as they were", async () => {
    expect(await codeOf(ask(reflectionClient(runner), { case: "listServices", value: "" }))).toBe(Code.Unauthenticated);
    expect(await codeOf(ask(reflectionClient(runner, "wrong"), { case: "listServices", value: "" }))).toBe(Code.Unauthenticated);
    const [answer] = await ask(reflectionClient(open), { case: "listServices", value: "" });
    expect(answer?.messageResponse.case).toBe("listServicesResponse");
    const anonymous = open.clientFor((baseUrl) => createGrpcTransport({ baseUrl }));
    expect(await codeOf(anonymous.list({}))).toBe(Code.Unauthenticated);
  });

  it("ends an open reflection stream with UNAVAILABLE when the runner shuts down", async () => {
    const doomed = await startTestRunner({ openReflection: true });
    let release = (): void => {};
    async function* requests() {
      yield { messageRequest: { case: "listServices" as const, value: "" } };
      // The client keeps its side open, as an interactive tool does between questions.
      await new Promise<void>((resolve) => (release = resolve));
    }
    const answers: string[] = [];
    const reading = (async () => {
      for await (const answer of reflectionClient(doomed).serverReflectionInfo(requests())) answers.push(answer.messageResponse.case ?? "");
    })();
    await expect.poll(() => answers).toEqual(["listServicesResponse"]);
    const started = Date.now();
    const failed = codeOf(reading).then((code) => ({ code, afterMs: Date.now() - started }));
    const closed = doomed.close();
    // The handler ends the stream itself, at once, rather than being cut off with the connection
    // (CANCELLED) when the grace for calls in flight runs out.
    expect(await failed).toMatchObject({ code: Code.Unavailable, afterMs: expect.any(Number) });
    expect((await failed).afterMs).toBeLessThan(1_000);
    await closed;
    release();
  });
});
