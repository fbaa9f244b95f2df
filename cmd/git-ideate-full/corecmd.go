package main

import "github.com/ideate/git-ideate/internal/corecmd"

// Env is what every command runs against (internal/corecmd). The record
// and board commands live there too, so that the lean git-ideate binary
// can run them without linking the gates; this binary adds the rest.
type Env = corecmd.Env
