package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"sync"
	"time"
)

// devicesJS prints Playwright's device descriptors as JSON, from the
// playwright-core found from the directory in argv[1].
const devicesJS = `const pw = require(require.resolve('playwright-core', {paths: [process.argv[1]]}));
process.stdout.write(JSON.stringify(pw.devices));`

// devicesTimeout bounds the one node start that reads the descriptors.
const devicesTimeout = 30 * time.Second

// Devices is Playwright's device catalogue as the workers know it: each
// descriptor (viewport, userAgent, deviceScaleFactor, isMobile, hasTouch,
// defaultBrowserType) by name. It is read once, from the playwright-core
// beside the worker command's script, when first needed; a failure is
// not kept, so the next use tries again.
type Devices struct {
	command []string

	mu   sync.Mutex
	list map[string]json.RawMessage
}

// NewDevices reads the catalogue of the workers started with command
// (WorkerConfig.Command).
func NewDevices(command []string) *Devices { return &Devices{command: command} }

// Devices returns the catalogue.
func (d *Devices) Devices(ctx context.Context) (map[string]json.RawMessage, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.list != nil {
		return d.list, nil
	}
	list, err := readDevices(ctx, d.command)
	if err != nil {
		return nil, err
	}
	d.list = list
	return list, nil
}

func readDevices(ctx context.Context, command []string) (map[string]json.RawMessage, error) {
	from, err := PlaywrightFrom(command)
	if err != nil {
		return nil, fmt.Errorf("device catalogue: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, devicesTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, command[0], "-e", devicesJS, from)
	cmd.SysProcAttr = sysProcAttr()
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.Env = childEnv(nil)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("device catalogue: %w: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	var list map[string]json.RawMessage
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, fmt.Errorf("device catalogue: %w", err)
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("device catalogue: playwright-core in %s lists no device", from)
	}
	return list, nil
}
