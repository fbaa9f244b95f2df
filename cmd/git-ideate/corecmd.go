package main

import "github.com/ideate/git-ideate/internal/corecmd"

// Env is what every command runs against (internal/corecmd, which also
// holds the record, board, steering and telemetry commands).
type Env = corecmd.Env
