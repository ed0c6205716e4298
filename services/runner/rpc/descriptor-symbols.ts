import type { DescriptorProto, EnumDescriptorProto, FieldDescriptorProto, FileDescriptorProto } from "@bufbuild/protobuf/wkt";

/** A fully qualified name a file declares, and what it names. */
export interface DeclaredSymbol {
  name: string;
  kind: "message" | "field" | "oneof" | "enum" | "enum_value" | "service" | "method" | "extension";
}

/** An extension a file declares: the fully qualified message it extends and its field number. */
export interface DeclaredExtension {
  extendee: string;
  number: number;
}

/**
 * Every fully qualified name a file declares, as protobuf scopes them: messages (nested ones and map
 * entries too), their fields and oneofs, enums and their values (which live in the enum's parent
 * scope), services and their methods, and extensions. Reflection clients ask for any of them
 * (`grpcurl describe terminal.v1.SpawnRequest.cols` asks for a field).
 */
export function symbolsOfFile(file: FileDescriptorProto): DeclaredSymbol[] {
  const symbols: DeclaredSymbol[] = [];
  const add = (kind: DeclaredSymbol["kind"], name: string): void => void symbols.push({ name, kind });
  const addEnum = (scope: string, enumType: EnumDescriptorProto): void => {
    add("enum", `${scope}${enumType.name}`);
    for (const value of enumType.value) add("enum_value", `${scope}${value.name}`);
  };
  const addMessage = (scope: string, message: DescriptorProto): void => {
    const name = `${scope}${message.name}`;
    add("message", name);
    for (const field of message.field) add("field", `${name}.${field.name}`);
    for (const extension of message.extension) add("extension", `${name}.${extension.name}`);
    for (const oneof of message.oneofDecl) add("oneof", `${name}.${oneof.name}`);
    message.enumType.forEach((nested) => addEnum(`${name}.`, nested));
    message.nestedType.forEach((nested) => addMessage(`${name}.`, nested));
  };
  const scope = file.package ? `${file.package}.` : "";
  file.messageType.forEach((message) => addMessage(scope, message));
  file.enumType.forEach((enumType) => addEnum(scope, enumType));
  for (const extension of file.extension) add("extension", `${scope}${extension.name}`);
  for (const service of file.service) {
    add("service", `${scope}${service.name}`);
    for (const method of service.method) add("method", `${scope}${service.name}.${method.name}`);
  }
  return symbols;
}

/** The extensions a file declares, at its top level or inside its messages. */
export function extensionsOfFile(file: FileDescriptorProto): DeclaredExtension[] {
  const fromMessage = (message: DescriptorProto): FieldDescriptorProto[] => [...message.extension, ...message.nestedType.flatMap(fromMessage)];
  return [...file.extension, ...file.messageType.flatMap(fromMessage)].map((field) => ({ extendee: field.extendee.replace(/^\./, ""), number: field.number }));
}
