package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// evaluateTask: three values of one product card, read with one
// browser_evaluate, as a model that knows what it wants writes it.
type evaluateTask struct{}

func (evaluateTask) Name() string { return "evaluate" }
func (evaluateTask) Goal() string {
	return fmt.Sprintf("read the price, the count in stock and the SKU of Product %d on a stock list of %d cards, with browser_evaluate", StockTarget, StockProducts)
}

// stockFunction is the function every side evaluates: the three values of
// the target's card, by their labels.
var stockFunction = fmt.Sprintf(`() => { const card = [...document.querySelectorAll('article')].find(a => a.querySelector('h3').textContent === 'Product %d'); `+
	`const v = l => [...card.querySelectorAll('dt')].find(d => d.textContent === l).nextElementSibling.textContent; `+
	`return { price: v('Price'), stock: v('In stock'), sku: v('SKU') }; }`, StockTarget)

// stockValues reads the evaluated object.
func stockValues(js string) (string, error) {
	var v struct{ Price, Stock, SKU string }
	if err := json.Unmarshal([]byte(js), &v); err != nil {
		return "", fmt.Errorf("the evaluated value %q: %w", js, err)
	}
	return v.Price + " " + v.Stock + " " + v.SKU, nil
}

// evaluateStock opens the stock page and evaluates stockFunction there:
// every side's two calls.
func evaluateStock(ctx context.Context, a *agent) (string, error) {
	if _, err := a.navigate(ctx, "stock"); err != nil {
		return "", err
	}
	return a.call(ctx, "browser_evaluate", "three values", map[string]any{"function": stockFunction})
}

func plainEvaluate(ctx context.Context, a *agent) (string, error) {
	text, err := evaluateStock(ctx, a)
	if err != nil {
		return "", err
	}
	js, err := EvaluateResult(text)
	if err != nil {
		return "", err
	}
	return stockValues(js)
}

func (evaluateTask) Snapshot(ctx context.Context, a *agent) (string, error) {
	return plainEvaluate(ctx, a)
}
func (evaluateTask) Find(ctx context.Context, a *agent) (string, error) { return plainEvaluate(ctx, a) }

func (evaluateTask) Proxy(ctx context.Context, a *agent) (string, error) {
	text, err := evaluateStock(ctx, a)
	if err != nil {
		return "", err
	}
	p, err := proxyAnswer(text)
	if err != nil {
		return "", err
	}
	if p.Result == "" {
		return "", fmt.Errorf("the answer carries no result: %q", text)
	}
	return stockValues(p.Result)
}

func (evaluateTask) Verify(_ context.Context, _ *Site, _, found string) (string, error) {
	price, stock, sku := StockValues(StockTarget)
	want := price + " " + stock + " " + sku
	got := fmt.Sprintf("the agent read %q (the page says %q)", found, want)
	if found != want {
		return got, fmt.Errorf("the agent read %q, want %q", found, want)
	}
	return got, nil
}

// tabsTask: read a value in a second tab, come back and act on it.
type tabsTask struct{}

func (tabsTask) Name() string { return "tabs" }
func (tabsTask) Goal() string {
	return "on the delivery page, open the carrier's tracking page in a second tab, read the delivery window there, go back to the first tab and confirm that window"
}

const windowLabel = "Delivery window"

// openCarrier opens the carrier's page in a new tab.
func (a *agent) openCarrier(ctx context.Context) (string, error) {
	return a.call(ctx, "browser_tabs", "new: the carrier's page", map[string]any{"action": "new", "url": a.site.TokenURL(a.run, "carrier")})
}

func (a *agent) firstTab(ctx context.Context) (string, error) {
	return a.call(ctx, "browser_tabs", "select the first tab", map[string]any{"action": "select", "index": 0})
}

// confirmWindow clicks the confirm button of window.
func (a *agent) confirmWindow(ctx context.Context, ref, window string) error {
	_, err := a.click(ctx, ref, "Confirm "+window)
	return err
}

func (tabsTask) Snapshot(ctx context.Context, a *agent) (string, error) {
	if _, err := a.navigate(ctx, "delivery"); err != nil {
		return "", err
	}
	if _, err := a.openCarrier(ctx); err != nil {
		return "", err
	}
	yaml, err := a.snapshot(ctx, "the carrier's page")
	if err != nil {
		return "", err
	}
	window, err := valueAfter(yaml, windowLabel)
	if err != nil {
		return "", err
	}
	if _, err := a.firstTab(ctx); err != nil {
		return "", err
	}
	if yaml, err = a.snapshot(ctx, "the delivery page"); err != nil {
		return "", err
	}
	ref, ok := ElementRef(yaml, "button", "Confirm "+window)
	if !ok {
		return "", fmt.Errorf("no button %q in the snapshot", "Confirm "+window)
	}
	return window, a.confirmWindow(ctx, ref, window)
}

func (tabsTask) Find(ctx context.Context, a *agent) (string, error) {
	if _, err := a.navigate(ctx, "delivery"); err != nil {
		return "", err
	}
	if _, err := a.openCarrier(ctx); err != nil {
		return "", err
	}
	text, err := a.find(ctx, windowLabel)
	if err != nil {
		return "", err
	}
	window, err := valueAfter(text, windowLabel)
	if err != nil {
		return "", err
	}
	if _, err := a.firstTab(ctx); err != nil {
		return "", err
	}
	if text, err = a.find(ctx, "Confirm "+window); err != nil {
		return "", err
	}
	ref, ok := refByNameContains(text, "button", "Confirm "+window)
	if !ok {
		return "", fmt.Errorf("no button %q in what browser_find returned", "Confirm "+window)
	}
	return window, a.confirmWindow(ctx, ref, window)
}

// Proxy reads the delivery page's buttons off its navigate answer (a small
// new page comes whole) and the window off the new tab's answer, or a
// search of it; the refs it read on the first tab still hold there.
func (tabsTask) Proxy(ctx context.Context, a *agent) (string, error) {
	text, err := a.navigate(ctx, "delivery")
	if err != nil {
		return "", err
	}
	p, err := proxyAnswer(text)
	if err != nil {
		return "", err
	}
	delivery, err := a.proxyPage(ctx, p)
	if err != nil {
		return "", err
	}
	if text, err = a.openCarrier(ctx); err != nil {
		return "", err
	}
	if p, err = proxyAnswer(text); err != nil {
		return "", err
	}
	carrier, ok := inlineSnapshot(p)
	if !ok {
		if carrier, err = a.search(ctx, p.RefID, windowLabel); err != nil {
			return "", err
		}
	}
	window, err := valueAfter(carrier, windowLabel)
	if err != nil {
		return "", err
	}
	if text, err = a.firstTab(ctx); err != nil {
		return "", err
	}
	if p, err = proxyAnswer(text); err != nil {
		return "", err
	}
	if yaml, ok := inlineSnapshot(p); ok {
		delivery = yaml // the tab as it is now
	}
	ref, ok := ElementRef(delivery, "button", "Confirm "+window)
	if !ok {
		return "", fmt.Errorf("no button %q in what the agent read", "Confirm "+window)
	}
	return window, a.confirmWindow(ctx, ref, window)
}

func (tabsTask) Verify(_ context.Context, site *Site, run, found string) (string, error) {
	rec := site.Record(run)
	got := fmt.Sprintf("carrier page fetched %d time(s); the agent read %q; the site recorded the window %q", rec.Fetched["carrier"], found, rec.Slot)
	switch {
	case rec.Fetched["carrier"] == 0:
		return got, fmt.Errorf("the site never served the carrier's page")
	case found != DeliveryWindow || !strings.EqualFold(rec.Slot, DeliveryWindow):
		return got, fmt.Errorf("confirmed %q after reading %q, want %q", rec.Slot, found, DeliveryWindow)
	}
	return got, nil
}
