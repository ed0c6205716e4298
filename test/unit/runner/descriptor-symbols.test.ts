import { create } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { extensionsOfFile, symbolsOfFile } from "../../../services/runner/rpc/descriptor-symbols.js";

const file = create(FileDescriptorProtoSchema, {
  name: "demo/v1/demo.proto",
  package: "demo.v1",
  messageType: [
    {
      name: "Outer",
      field: [{ name: "id" }, { name: "labels" }],
      oneofDecl: [{ name: "choice" }],
      nestedType: [{ name: "LabelsEntry", field: [{ name: "key" }] }],
      enumType: [{ name: "Kind", value: [{ name: "KIND_A" }] }],
      extension: [{ name: "nested_ext", extendee: ".demo.v1.Base", number: 101 }],
    },
    { name: "Base" },
  ],
  enumType: [{ name: "Color", value: [{ name: "COLOR_RED" }, { name: "COLOR_BLUE" }] }],
  extension: [{ name: "top_ext", extendee: ".demo.v1.Base", number: 100 }],
  service: [{ name: "Demo", method: [{ name: "Run" }] }],
});

describe("symbolsOfFile", () => {
  it("names everything a file declares, scoped as protobuf scopes it", () => {
    const byName = Object.fromEntries(symbolsOfFile(file).map(({ name, kind }) => [name, kind]));
    expect(byName).toEqual({
      "demo.v1.Outer": "message",
      "demo.v1.Outer.id": "field",
      "demo.v1.Outer.labels": "field",
      "demo.v1.Outer.nested_ext": "extension",
      "demo.v1.Outer.choice": "oneof",
      "demo.v1.Outer.Kind": "enum",
      // Enum values belong to the scope the enum is in, not to the enum.
      "demo.v1.Outer.KIND_A": "enum_value",
      "demo.v1.Outer.LabelsEntry": "message",
      "demo.v1.Outer.LabelsEntry.key": "field",
      "demo.v1.Base": "message",
      "demo.v1.Color": "enum",
      "demo.v1.COLOR_RED": "enum_value",
      "demo.v1.COLOR_BLUE": "enum_value",
      "demo.v1.top_ext": "extension",
      "demo.v1.Demo": "service",
      "demo.v1.Demo.Run": "method",
    });
  });

  it("needs no package", () => {
    expect(symbolsOfFile(create(FileDescriptorProtoSchema, { messageType: [{ name: "Loose" }] }))).toEqual([{ name: "Loose", kind: "message" }]);
  });
});

describe("extensionsOfFile", () => {
  it("finds extensions at the top level and inside messages, by extendee without the leading dot", () => {
    expect(extensionsOfFile(file)).toEqual([
      { extendee: "demo.v1.Base", number: 100 },
      { extendee: "demo.v1.Base", number: 101 },
    ]);
  });
});
