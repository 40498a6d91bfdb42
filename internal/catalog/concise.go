package catalog

import (
	"encoding/json"
	"strings"
)

// The tool list is sent with every turn of a conversation, so what it says
// of upstream's tools is kept short: a description per known tool, shorter
// wording of upstream's long property descriptions, and nothing a model
// cannot use. What a call accepts is unchanged: calls are validated against
// upstream's own schema.

// toolSummaries are the descriptions of upstream's tools the model reads,
// by tool name. A tool that is not here (one a later upstream adds) keeps
// the first sentence of upstream's own.
var toolSummaries = map[string]string{
	"browser_click":            "Click an element",
	"browser_close":            "Close the page",
	"browser_console_messages": "Returns console messages",
	"browser_drag":             "Drag and drop between two elements",
	"browser_drop":             "Drop files or data onto an element, as if dragged in; give paths or data",
	"browser_emulate_media":    "Emulate CSS media features; omitted ones stay, null clears one",
	"browser_evaluate":         "Evaluate JavaScript on the page or an element",
	"browser_file_upload":      "Upload files",
	"browser_fill_form":        "Fill multiple form fields",
	"browser_find":             "Search the page snapshot for text or a regex: matching nodes with nearby lines, under their path. Cheaper than a snapshot to locate a ref",
	"browser_handle_dialog":    "Handle a dialog",
	"browser_hover":            "Hover over an element",
	"browser_navigate":         "Navigate to a URL",
	"browser_navigate_back":    "Go back",
	"browser_network_request":  "One network request in full (headers, body), or one part",
	"browser_network_requests": "Numbered list of network requests since the page loaded",
	"browser_press_key":        "Press a key",
	"browser_resize":           "Resize the browser window",
	"browser_run_code_unsafe":  "Run Playwright code (arbitrary JavaScript in the Playwright process)",
	"browser_select_option":    "Select options in a dropdown",
	"browser_snapshot":         "Accessibility snapshot of the page, with element refs; better than a screenshot",
	"browser_tabs":             "List, create, close or select a tab",
	"browser_take_screenshot":  "Screenshot of the page or an element; act on browser_snapshot, not on this",
	"browser_type":             "Type text into editable element",
	"browser_wait_for":         "Wait for text to appear or disappear, or some seconds",

	// The storage group's.
	"browser_cookie_clear":          "Clear all cookies",
	"browser_cookie_delete":         "Delete a cookie",
	"browser_cookie_get":            "Get a cookie by name",
	"browser_cookie_list":           "List cookies, optionally by domain and path",
	"browser_cookie_set":            "Set a cookie",
	"browser_localstorage_clear":    "Clear localStorage",
	"browser_localstorage_delete":   "Delete a localStorage item",
	"browser_localstorage_get":      "Get a localStorage item",
	"browser_localstorage_list":     "List localStorage items",
	"browser_localstorage_set":      "Set a localStorage item",
	"browser_sessionstorage_clear":  "Clear sessionStorage",
	"browser_sessionstorage_delete": "Delete a sessionStorage item",
	"browser_sessionstorage_get":    "Get a sessionStorage item",
	"browser_sessionstorage_list":   "List sessionStorage items",
	"browser_sessionstorage_set":    "Set a sessionStorage item",
	"browser_set_storage_state":     "Restore cookies and localStorage from a file, clearing them first",
	"browser_storage_state":         "Save cookies and localStorage to a file",
}

// saveToFile is the one wording of upstream's many "filename" properties
// that save a result instead of returning it.
const saveToFile = "Save to this file instead of returning it"

// propertySummaries replace upstream's long property descriptions, by
// upstream's exact wording: a property whose wording changes falls back to
// its first sentence rather than to a summary of something else.
var propertySummaries = map[string]string{
	"Human-readable element description used to obtain permission to interact with the element":            "Element description",
	"Human-readable source element description used to obtain the permission to interact with the element": "Source element description",
	"Human-readable target element description used to obtain the permission to interact with the element": "Target element description",
	"Exact target element reference from the page snapshot, or a unique element selector":                  "Ref from the snapshot, or a unique selector",

	"Level of the console messages to return. Each level includes the messages of more severe levels. Defaults to \"info\".":                                                                                       "This level and more severe",
	"Return all console messages since the beginning of the session, not just since the last navigation. Defaults to false.":                                                                                       "Since the session began, not the last navigation",
	"File name to save the console messages to. Relative file names are resolved against the workspace root. If not provided, messages are returned as text.":                                                      saveToFile,
	"File name to save the result to. Relative file names are resolved against the workspace root. If not provided, result is returned as text.":                                                                   saveToFile,
	"File name to save the network requests to. Relative file names are resolved against the workspace root. If not provided, requests are returned as text.":                                                      saveToFile,
	"File name to save the result to. Relative file names are resolved against the workspace root. If not provided, output is returned as text.":                                                                   saveToFile,
	"Save results to a file instead of returning them in the response. Relative file names are resolved against the workspace root.":                                                                               saveToFile,
	"Save snapshot to a file instead of returning it in the response. Relative file names are resolved against the workspace root.":                                                                                saveToFile,
	"File name to save the screenshot to. Relative file names are resolved against the workspace root. If not specified, the screenshot is saved into the output directory as `page-{timestamp}.{png|jpeg|webp}`.": "File name to save it to",
	"Load code from the specified file. Relative file names are resolved against the workspace root. If both code and filename are provided, code will be ignored.":                                                "Load the code from this file instead",

	"The absolute paths to the files to upload. Can be single file or multiple files. If omitted, file chooser is cancelled.":                                                                                                 "Absolute paths; none cancels the file chooser",
	"Data to drop, as a map of MIME type to string value (e.g. {\"text/plain\": \"hello\", \"text/uri-list\": \"https://example.com\"}).":                                                                                     "MIME type to string value, e.g. {\"text/plain\":\"hi\"}",
	"Plain text to search for in the page snapshot (case-insensitive substring match). Provide either text or regex, not both.":                                                                                               "Case-insensitive substring; text or regex, not both",
	"Regular expression to search for in the page snapshot. Matching is case-sensitive by default; wrap the pattern in slashes to add flags, e.g. \"/error/i\" for case-insensitive. Provide either text or regex, not both.": "Case-sensitive regex; /re/i adds flags",
	"Value to fill in the field. If the field is a checkbox, the value should be `true` or `false`. If the field is a combobox, the value should be the text of the option.":                                                  "Checkbox: true or false; combobox: the option's text",
	"Name of the key to press or a character to generate, such as `ArrowLeft` or `a`":                                                                                                                                         "Key name or character, e.g. ArrowLeft or a",
	"Whether to submit entered text (press Enter after)": "Press Enter after",
	"Whether to type one character at a time. Useful for triggering key handlers in the page. By default entire text is filled in at once.": "One character at a time (fires key handlers)",
	"Whether to include successful static resources like images, fonts, scripts, etc. Defaults to false.":                                   "Include successful static files (images, fonts, scripts)",
	"Only return requests whose URL matches this regexp (e.g. \"/api/.*user\").":                                                            "Only URLs matching this regexp",
	"1-based index of the request, as printed by browser_network_requests.":                                                                 "1-based, from browser_network_requests",
	"Return only this part of the request. Omit to return full details.":                                                                    "Only this part",
	"A JavaScript function containing Playwright code to execute. It will be invoked with a single argument, page, which you can use for any page interaction. For example: `async (page) => { await page.getByRole('button', { name: 'Submit' }).click(); return await page.title(); }`": "Function of Playwright's page, e.g. async (page) => { return await page.title(); }",
	"Image format for the screenshot. If unset, inferred from the filename extension, otherwise png.":                                                                                                                                                     "Default: from filename, else png",
	"When true, takes a screenshot of the full scrollable page, instead of the currently visible viewport. Cannot be used with element screenshots.":                                                                                                      "Whole scrollable page, not the viewport; not with an element",
	"Image resolution scale. \"css\" produces a screenshot sized in CSS pixels (smaller, consistent across devices). \"device\" produces a high-resolution screenshot using device pixels (larger, accounts for the device pixel ratio). Default is css.": "css pixels (smaller) or device pixels",
	"Include each element's bounding box as [box=x,y,width,height] in the snapshot. Coordinates are viewport-relative, in CSS pixels (Element.getBoundingClientRect)":                                                                                     "Add [box=x,y,width,height] per element",
	"Whether to perform a double click instead of a single click":                               "Double click",
	"Array of values to select in the dropdown. This can be a single value or multiple values.": "Values to select",
	"Tab index, used for close/select. If omitted for close, current tab is closed.":            "For close/select; close without it closes the current tab",
}

// longDescription is the length past which a description without a summary
// is cut to its first sentence.
const longDescription = 80

// conciseUpstream returns the description and input schema of one of
// upstream's tools as listed: the summary (else the first sentence) and the
// schema without $schema, its long property descriptions shortened.
func conciseUpstream(name, desc string, schema json.RawMessage) (string, json.RawMessage) {
	if s, ok := toolSummaries[name]; ok {
		desc = s
	} else {
		desc = firstSentence(desc)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(schema, &m); err != nil || m == nil {
		return desc, schema
	}
	// A dialect URI tells a validator how to read the schema; a model
	// reads the schema itself.
	delete(m, "$schema")
	return desc, conciseNode(mustJSON(m), false)
}

// conciseNode shortens the property descriptions of a schema node and its
// subschemas; isProperty says the node is a property's schema (whose own
// description is one).
func conciseNode(raw json.RawMessage, isProperty bool) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return raw
	}
	if isProperty {
		var d string
		if json.Unmarshal(m["description"], &d) == nil && d != "" {
			m["description"] = mustJSON(shortProperty(d))
		}
	}
	if p, ok := m["properties"]; ok {
		var props map[string]json.RawMessage
		if json.Unmarshal(p, &props) == nil {
			for k, v := range props {
				props[k] = conciseNode(v, true)
			}
			m["properties"] = mustJSON(props)
		}
	}
	if it, ok := m["items"]; ok {
		m["items"] = conciseNode(it, false)
	}
	return mustJSON(m)
}

func shortProperty(d string) string {
	if s, ok := propertySummaries[d]; ok {
		return s
	}
	if len(d) > longDescription {
		return firstSentence(d)
	}
	return d
}

// firstSentence is s up to the end of its first sentence (a period, then a
// space), not counting "e.g." and "i.e.".
func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	from := 0
	for {
		i := strings.Index(s[from:], ". ")
		if i < 0 {
			return s
		}
		end := from + i
		if !strings.HasSuffix(s[:end], "e.g") && !strings.HasSuffix(s[:end], "i.e") {
			return s[:end+1]
		}
		from = end + 2
	}
}
