import { toBinary, type DescFile, type DescService } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, type ServiceImpl } from "@connectrpc/connect";
import { ServerReflection as ReflectionV1 } from "../../../gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ReflectionV1Alpha } from "../../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { untilAborted } from "../../../lib/until-aborted.js";
import { extensionsOfFile, symbolsOfFile, type DeclaredExtension } from "./descriptor-symbols.js";

/** Both versions of the reflection protocol: the same messages under two packages. */
export const REFLECTION_SERVICES = [ReflectionV1, ReflectionV1Alpha] as const;

/** A question, as both versions' generated oneof reads. */
type Question =
  | { case: "fileByFilename" | "fileContainingSymbol" | "allExtensionNumbersOfType" | "listServices"; value: string }
  | { case: "fileContainingExtension"; value: { containingType: string; extensionNumber: number } }
  | { case: undefined; value?: undefined };

/** An answer, in the shape both versions' generated oneof accepts. */
type Answer =
  | { case: "fileDescriptorResponse"; value: { fileDescriptorProto: Uint8Array[] } }
  | { case: "allExtensionNumbersResponse"; value: { baseTypeName: string; extensionNumber: number[] } }
  | { case: "listServicesResponse"; value: { service: { name: string }[] } }
  | { case: "errorResponse"; value: { errorCode: number; errorMessage: string } };

/**
 * gRPC server reflection (grpc.reflection.v1 and v1alpha) over the descriptors the generated code
 * holds: `services` are listed (with the reflection services themselves), and every file that
 * declares them, with its dependencies, can be fetched by name or by a symbol it declares.
 */
export function createReflectionServices(services: readonly DescService[]): {
  v1: ServiceImpl<typeof ReflectionV1>;
  v1alpha: ServiceImpl<typeof ReflectionV1Alpha>;
} {
  const listed = [...services, ...REFLECTION_SERVICES];
  const files = new Map(listed.flatMap((service) => withImports(service.file)).map((file) => [file.proto.name, file]));
  const fileOfSymbol = new Map<string, DescFile>();
  const messages = new Set<string>();
  const extensions: (DeclaredExtension & { file: DescFile })[] = [];
  for (const file of files.values()) {
    for (const { name, kind } of symbolsOfFile(file.proto)) {
      fileOfSymbol.set(name, file);
      if (kind === "message") messages.add(name);
    }
    for (const extension of extensionsOfFile(file.proto)) extensions.push({ ...extension, file });
  }

  const found = (file: DescFile | undefined, what: string): Answer =>
    file
      ? { case: "fileDescriptorResponse", value: { fileDescriptorProto: withImports(file).map((f) => toBinary(FileDescriptorProtoSchema, f.proto)) } }
      : { case: "errorResponse", value: { errorCode: Code.NotFound, errorMessage: `${what} not found` } };

  const answer = (question: Question): Answer => {
    switch (question.case) {
      case "listServices":
        return { case: "listServicesResponse", value: { service: listed.map((service) => ({ name: service.typeName })) } };
      case "fileByFilename":
        return found(files.get(question.value), `file "${question.value}"`);
      case "fileContainingSymbol":
        return found(fileOfSymbol.get(question.value), `symbol "${question.value}"`);
      case "fileContainingExtension": {
        const { containingType, extensionNumber } = question.value;
        const extension = extensions.find((e) => e.extendee === containingType && e.number === extensionNumber);
        return found(extension?.file, `extension ${extensionNumber} of "${containingType}"`);
      }
      case "allExtensionNumbersOfType": {
        if (!messages.has(question.value)) return found(undefined, `message type "${question.value}"`);
        const numbers = extensions.filter((e) => e.extendee === question.value).map((e) => e.number);
        return { case: "allExtensionNumbersResponse", value: { baseTypeName: question.value, extensionNumber: numbers } };
      }
      default:
        return { case: "errorResponse", value: { errorCode: Code.InvalidArgument, errorMessage: "the request asks nothing: set one of its message_request fields" } };
    }
  };

  return {
    v1: {
      async *serverReflectionInfo(requests, context) {
        for await (const request of untilAborted(requests, context.signal)) {
          yield { validHost: request.host, originalRequest: request, messageResponse: answer(request.messageRequest) };
        }
      },
    },
    v1alpha: {
      async *serverReflectionInfo(requests, context) {
        for await (const request of untilAborted(requests, context.signal)) {
          yield { validHost: request.host, originalRequest: request, messageResponse: answer(request.messageRequest) };
        }
      },
    },
  };
}

/** A file and every file it imports, directly or not: the file itself first (some clients read only the first). */
function withImports(file: DescFile): DescFile[] {
  const closure = new Map<string, DescFile>();
  const visit = (current: DescFile): void => {
    if (closure.has(current.proto.name)) return;
    closure.set(current.proto.name, current);
    current.dependencies.forEach(visit);
  };
  visit(file);
  return [...closure.values()];
}
