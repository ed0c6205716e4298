/** One section of an haproxy configuration: `frontend ahp`, with its lines (comments dropped, whitespace squeezed). */
export interface HaproxySection {
  kind: string;
  name: string;
  lines: string[];
}

/** The sections of an haproxy configuration file's text, in order. */
export function haproxySections(text: string): HaproxySection[] {
  const sections: HaproxySection[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.replace(/#.*$/, "").trim().replace(/\s+/g, " ");
    if (!line) continue;
    if (/^\S/.test(raw)) {
      const [kind, name = ""] = line.split(" ");
      sections.push({ kind: kind!, name, lines: [] });
    } else {
      if (!sections.length) throw new Error(`a setting before any section: ${line}`);
      sections.at(-1)!.lines.push(line);
    }
  }
  return sections;
}

/** The section of this kind and name; throws when there is none. */
export function haproxySection(sections: HaproxySection[], kind: string, name?: string): HaproxySection {
  const found = sections.find((section) => section.kind === kind && (name === undefined || section.name === name));
  if (!found) throw new Error(`no ${kind} ${name ?? ""} section`);
  return found;
}
