package gitstore

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
)

// GitFailed is a git command that exited non-zero; the message carries its
// first line of stderr.
const GitFailed apperr.Code = "GIT_FAILED"

// gitProc builds a git command run in dir (a working tree) through
// Command: its own process group, killed whole when ctx ends. git finds
// the repository from dir (gitEnv).
func gitProc(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := Command(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	return cmd
}

// gitEnv is this process's environment for git: without the variables
// that would point it at another repository or index (a git hook's
// GIT_DIR, GIT_INDEX_FILE), and never prompting.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_PREFIX":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_TERMINAL_PROMPT=0")
}

// runGitEnv runs git in dir with env added to its environment and stdin
// (may be nil), and returns its stdout. A non-zero exit is GitFailed
// naming the command and git's first line of complaint; a cancelled ctx
// returns ctx's error.
func (s *Store) runGitEnv(ctx context.Context, dir string, env []string, stdin io.Reader, args ...string) ([]byte, error) {
	if err := s.flushNow(); err != nil {
		return nil, err
	}
	cmd := gitProc(ctx, dir, args...)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &apperr.Error{Code: GitFailed, Msg: "git " + strings.Join(args[:min(len(args), 2)], " ") + " failed: " + firstLine(errb.String(), err), Err: err}
	}
	return out.Bytes(), nil
}

// RunGit runs git in dir (a working tree, or any directory with --git-dir
// among args) in its own process group, killed whole when ctx ends, and
// returns its stdout.
func (s *Store) RunGit(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return s.runGitEnv(ctx, dir, nil, nil, args...)
}

// RunGitInput is RunGit with stdin.
func (s *Store) RunGitInput(ctx context.Context, dir string, stdin io.Reader, args ...string) ([]byte, error) {
	return s.runGitEnv(ctx, dir, nil, stdin, args...)
}
