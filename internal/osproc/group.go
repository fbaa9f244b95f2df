package osproc

import "sync/atomic"

// beforeGroup is what SetBeforeGroup installed.
var beforeGroup atomic.Pointer[func()]

// SetBeforeGroup makes Group call f (from any goroutine, once per Group)
// before it sets a command up; nil removes it. The CLI installs its
// signal handling there: a call learns it needs it when it first starts a
// process it must be able to kill on ^C, and most calls start none.
func SetBeforeGroup(f func()) {
	if f == nil {
		beforeGroup.Store(nil)
		return
	}
	beforeGroup.Store(&f)
}

// runBeforeGroup calls what SetBeforeGroup installed, if anything.
func runBeforeGroup() {
	if f := beforeGroup.Load(); f != nil {
		(*f)()
	}
}
