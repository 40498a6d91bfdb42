package upstream

// RSS is the resident memory, in bytes, of the worker's whole process group
// (node and anything it spawned there), or 0 once the worker has exited or
// where it cannot be read (outside Linux: docs/DEVELOPMENT.md, Platforms). It is a sum of per-process RSS,
// so pages shared between the processes count once per process: an upper
// bound, cheap enough to show per session (one pass over /proc/*/stat, no
// smaps, shared by all callers for up to a second, so it may be that old).
// In per-session mode Playwright starts the worker's Chromium in a process
// group of its own, which this does not include.
func (w *Worker) RSS() int64 { return w.proc.rss() }

// RSS is the resident memory, in bytes, of the browser's process group (the
// browser, its renderers and helpers; not crashpad handlers, which leave the
// group), or 0 once it has exited or where it cannot be read. Like
// Worker.RSS, shared pages count once per process.
func (b *Browser) RSS() int64 { return b.proc.rss() }

// rss sums the group's resident memory. It holds p.mu so that the reaper
// cannot reap the leader meanwhile: while the leader is unreaped, its pid,
// and so the pgid, cannot be recycled by an unrelated group.
func (p *process) rss() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaped {
		return 0
	}
	return p.group.rss(p.pid)
}

// leaderRSS is the resident bytes of the group's leader alone, read now.
// Like rss it holds p.mu, so the pid it reads is still the leader's.
func (p *process) leaderRSS() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.reaped {
		return 0
	}
	return pidRSS(p.pid)
}
