//go:build windows

package upstream

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// sysProcAttr gives the child a console process group of its own, the only
// thing a CTRL_BREAK_EVENT (the polite stop) can be sent to. The Job Object
// that stands for the Unix process group is joined after the start
// (joinGroup).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
}

// There is no waitid(WNOWAIT) here, nor any need for it: the job handle is
// ours until release, so it cannot name someone else's processes.
const canWaitUnreaped = false

func waitExited(int) error { return nil }

// procDying is false: a request written to a dying worker fails once its
// pipes close.
func procDying(int) bool { return false }

// procGroup is a Job Object holding the child and, by inheritance, all it
// starts. JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE ends them all when the last
// handle closes: when the child is reaped (release), or when the proxy dies
// however it dies, which is what pdeathsig gives on Linux.
type procGroup struct{ job windows.Handle }

// joinGroup puts the started process pid in a new job. The child runs
// before it is assigned: a process it starts in that window (node does not
// spawn anything in its first instructions) stays outside the job. Starting
// it suspended would close the window, but os/exec does not hand out the
// thread handle needed to resume it.
func joinGroup(pid int) (procGroup, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return procGroup{}, fmt.Errorf("create job object: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{
			LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
		},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		_ = windows.CloseHandle(job)
		return procGroup{}, fmt.Errorf("set job object limits: %w", err)
	}
	// The pid cannot be recycled yet: os.Process holds a handle to it.
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		_ = windows.CloseHandle(job)
		return procGroup{}, fmt.Errorf("open process %d: %w", pid, err)
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		_ = windows.CloseHandle(job)
		return procGroup{}, fmt.Errorf("assign process %d to job object: %w", pid, err)
	}
	return procGroup{job: job}, nil
}

// signal maps the Unix stop steps: SIGKILL terminates every process in the
// job; any other signal is a CTRL_BREAK_EVENT to the child's console group
// (node's default for it is to exit), which does nothing if the proxy has
// no console, leaving the stop to the SIGKILL step.
func (g procGroup) signal(pid int, sig syscall.Signal) {
	if sig == syscall.SIGKILL {
		_ = windows.TerminateJobObject(g.job, 1)
		return
	}
	_ = windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(pid))
}

// release closes the job, which kills whatever the leader left running.
func (g procGroup) release() { _ = windows.CloseHandle(g.job) }

// rss is not measured on Windows.
func (procGroup) rss(int) int64 { return 0 }

func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}

// killGroup ends a short-lived child that has no job of its own: only the
// process itself can be named.
func killGroup(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
