package catalog

import "github.com/playwright-mcp-proxy/playwright-mcp-proxy/internal/toolset"

// Reach says how far one of upstream's tools reaches: the session's own
// pages, or the worker's Node process and, through Playwright's objects,
// the whole browser process behind it. It decides who may be offered the
// tool.
type Reach int

const (
	// InPage tools act through Playwright's API on the session's own pages
	// and BrowserContext (script they take runs inside the page): another
	// session's context is out of their reach even when sessions share one
	// browser process.
	InPage Reach = iota + 1
	// OutsidePage tools run code in the worker's Node process with
	// Playwright's objects, or show what reaches the browser process (its
	// endpoint): where sessions share one browser process, they reach every
	// session's pages and cookies. They are in tool group unsafe, offered
	// only while every session has a browser process of its own.
	OutsidePage
	// Never tools start processes of their own outside the worker's
	// process group, which the proxy can neither confine to one session
	// nor stop: no configuration offers them.
	Never
)

// Review is the reviewed reach of one of upstream's tools and why.
type Review struct {
	Reach Reach
	Why   string
}

// Why an in-page tool stays within the session, by family.
const (
	whyPage    = "acts on the session's own page through Playwright's API"
	whyScript  = "runs its script inside the page (page.evaluate), where the page's own scripts run"
	whyContext = "reads or changes the session's own BrowserContext (its cookies, storage, routes, tabs, recordings)"
	whyFiles   = "acts on the session's own page; the files it reads or writes are confined to the worker's own directory"
)

// upstreamReview is every tool of the pinned @playwright/mcp (0.0.83), under
// every --caps value, reviewed by reading its handler in playwright-core's
// lib/coreBundle.js. A tool upstream lists that is not here is treated as
// OutsidePage until someone reads it and adds it
// (TestUpstreamToolsAreReviewed fails on it).
var upstreamReview = map[string]Review{
	// core
	"browser_click":            {InPage, whyPage},
	"browser_close":            {InPage, "closes the session's own page"},
	"browser_console_clear":    {InPage, whyPage},
	"browser_console_messages": {InPage, whyPage},
	"browser_drag":             {InPage, whyPage},
	"browser_drop":             {InPage, whyFiles},
	"browser_evaluate":         {InPage, whyScript},
	"browser_file_upload":      {InPage, whyFiles},
	"browser_fill_form":        {InPage, whyPage},
	"browser_find":             {InPage, "searches the session's own page snapshot"},
	"browser_handle_dialog":    {InPage, whyPage},
	"browser_hover":            {InPage, whyPage},
	"browser_emulate_media":    {InPage, whyPage},
	"browser_network_clear":    {InPage, whyPage},
	"browser_network_request":  {InPage, whyPage},
	"browser_network_requests": {InPage, whyPage},
	"browser_resize":           {InPage, whyPage},
	"browser_run_code_unsafe": {OutsidePage, "runs JavaScript in the worker's Node process with Playwright's page object, " +
		"from which page.context().browser() reaches every BrowserContext of the browser process (upstream itself calls it RCE-equivalent)"},
	"browser_select_option":   {InPage, whyPage},
	"browser_snapshot":        {InPage, whyPage},
	"browser_take_screenshot": {InPage, whyFiles},
	"browser_wait_for":        {InPage, whyPage},
	"browser_webmcp_call":     {InPage, "calls a tool the page itself registered (WebMCP), inside the page"},
	"browser_webmcp_list":     {InPage, "lists the tools the page itself registered (WebMCP)"},
	// core-input
	"browser_check":              {InPage, whyPage},
	"browser_keydown":            {InPage, whyPage},
	"browser_keyup":              {InPage, whyPage},
	"browser_press_key":          {InPage, whyPage},
	"browser_press_sequentially": {InPage, whyPage},
	"browser_type":               {InPage, whyPage},
	"browser_uncheck":            {InPage, whyPage},
	// core-navigation
	"browser_navigate":         {InPage, whyPage},
	"browser_navigate_back":    {InPage, whyPage},
	"browser_navigate_forward": {InPage, whyPage},
	"browser_reload":           {InPage, whyPage},
	// core-tabs
	"browser_tabs": {InPage, "lists, opens and closes the pages of the session's own BrowserContext"},
	// storage
	"browser_cookie_clear":          {InPage, whyContext},
	"browser_cookie_delete":         {InPage, whyContext},
	"browser_cookie_get":            {InPage, whyContext},
	"browser_cookie_list":           {InPage, whyContext},
	"browser_cookie_set":            {InPage, whyContext},
	"browser_localstorage_clear":    {InPage, whyContext},
	"browser_localstorage_delete":   {InPage, whyContext},
	"browser_localstorage_get":      {InPage, whyContext},
	"browser_localstorage_list":     {InPage, whyContext},
	"browser_localstorage_set":      {InPage, whyContext},
	"browser_sessionstorage_clear":  {InPage, whyContext},
	"browser_sessionstorage_delete": {InPage, whyContext},
	"browser_sessionstorage_get":    {InPage, whyContext},
	"browser_sessionstorage_list":   {InPage, whyContext},
	"browser_sessionstorage_set":    {InPage, whyContext},
	"browser_set_storage_state":     {InPage, whyContext + "; its file is confined to the worker's own directory"},
	"browser_storage_state":         {InPage, whyContext + "; its file is confined to the worker's own directory"},
	// network
	"browser_network_state_set": {InPage, whyContext},
	"browser_route":             {InPage, whyContext},
	"browser_route_list":        {InPage, whyContext},
	"browser_unroute":           {InPage, whyContext},
	// pdf
	"browser_pdf_save": {InPage, whyFiles},
	// vision
	"browser_mouse_click_xy": {InPage, whyPage},
	"browser_mouse_down":     {InPage, whyPage},
	"browser_mouse_drag_xy":  {InPage, whyPage},
	"browser_mouse_move_xy":  {InPage, whyPage},
	"browser_mouse_up":       {InPage, whyPage},
	"browser_mouse_wheel":    {InPage, whyPage},
	// devtools
	"browser_annotate": {Never, "starts Playwright's dashboard as a detached process outside the worker's process group; " +
		"it lists every browser bound on the machine, with their contexts, and waits for a person to draw"},
	"browser_hide_highlight":     {InPage, whyPage},
	"browser_highlight":          {InPage, whyPage},
	"browser_resume":             {InPage, "resumes the Playwright debugger of the session's own BrowserContext"},
	"browser_start_recording":    {InPage, whyContext},
	"browser_start_tracing":      {InPage, whyContext},
	"browser_start_video":        {InPage, whyContext},
	"browser_stop_recording":     {InPage, whyContext},
	"browser_stop_tracing":       {InPage, whyContext},
	"browser_stop_video":         {InPage, whyContext},
	"browser_video_chapter":      {InPage, whyPage},
	"browser_video_hide_actions": {InPage, whyPage},
	"browser_video_show_actions": {InPage, whyPage},
	// testing
	"browser_generate_locator":       {InPage, whyPage},
	"browser_verify_element_visible": {InPage, whyPage},
	"browser_verify_list_visible":    {InPage, whyPage},
	"browser_verify_text_visible":    {InPage, whyPage},
	"browser_verify_value":           {InPage, whyPage},
	// config
	"browser_get_config": {OutsidePage, "shows upstream's resolved configuration, which holds the browser's endpoint " +
		"(a browser node's connection settings too): with it, anything on the machine can attach to the browser process every session shares"},
}

// unreviewed is the review of a tool upstream lists that upstreamReview
// does not hold: a newer @playwright/mcp's, not read yet.
var unreviewed = Review{OutsidePage, "is not in the proxy's reviewed list of upstream's tools, so it is treated as reaching outside the page"}

// ReviewOf is the reviewed reach of one of upstream's tools.
func ReviewOf(name string) (Review, bool) {
	r, ok := upstreamReview[name]
	if !ok {
		return unreviewed, false
	}
	return r, true
}

// noGroup is the group of a tool no selection holds.
const noGroup = ""

// upstreamGroup is the tool group one of upstream's tools is offered in:
// its toolset group for an in-page tool; toolset.GroupUnsafe for one that
// reaches outside the page, when sessions have browser processes of their
// own; none otherwise.
func upstreamGroup(name string, ownBrowsers bool) string {
	r, _ := ReviewOf(name)
	switch {
	case r.Reach == InPage:
		return toolset.UpstreamGroup(name)
	case r.Reach == OutsidePage && ownBrowsers:
		return toolset.GroupUnsafe
	}
	return noGroup
}
