package gates

// SetPinParallel sets how many mutant runs go at once (0: one per CPU)
// and returns the undo.
func SetPinParallel(n int) func() {
	old := pinParallel
	pinParallel = n
	return func() { pinParallel = old }
}
