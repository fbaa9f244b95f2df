// Package archtest holds the import-rule test: it reads the layer table in
// docs/ARCHITECTURE.md and the module's import graph from
// `go list -deps -json ./...`, and fails on any import the table forbids,
// on any package without a row, and on rows that no longer match the tree.
// It has no code outside its test.
//
// # The rule
//
// Each package has a floor. A package imports packages on lower floors
// freely, and a package on its own floor only where its row names it under
// "same floor"; it never imports a higher floor. Test helpers (kind test)
// are imported only by _test.go files, other test helpers and benches.
// Edges the code still has against the rule are listed in the test with
// the reason and the change that removes them; an exception the code no
// longer needs fails the test too, so the list only shrinks.
package archtest
