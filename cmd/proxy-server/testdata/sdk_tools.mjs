// What the SDK scripts of this directory share.

// tools is every tool of tools/list, all pages, sorted by name: the whole
// definitions (name, description, inputSchema, annotations…) as the SDK
// parsed them, for the Go tests to compare with another surface's.
export async function tools(client) {
  const all = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    all.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return all.sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
}
