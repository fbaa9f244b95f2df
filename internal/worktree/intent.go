package worktree

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/ideate/git-ideate/internal/apperr"
	"github.com/ideate/git-ideate/internal/atomicfile"
	"github.com/ideate/git-ideate/internal/osproc"
)

// IntentDir, under the clone's state directory, holds one file per task
// whose start is claiming its board item and has not yet written the
// contract that records the claim.
const IntentDir = "starting"

// Intent is what a start writes before it claims: the item, the holder
// and when. A start killed between its claim and its contract leaves the
// claim on the board and the intent here; the intent is this clone's
// evidence that the claim is its own, so the same holder's next start (or
// release) takes that claim up at once instead of waiting out its lease.
// A claim by the same holder name from another clone made before Since is
// never taken for this clone's.
type Intent struct {
	Task   string `json:"task"`
	Item   string `json:"item"`
	Holder string `json:"holder"`
	Since  string `json:"since"` // RFC 3339, milliseconds, UTC
}

func (m *Manager) intentPath(task string) string {
	return filepath.Join(m.git.Repo().StateDir(), IntentDir, slug(task)+".json")
}

// Intend records that a start of task is about to claim item for holder.
func (m *Manager) Intend(task, item, holder string, now time.Time) error {
	if err := CheckTaskID(task); err != nil {
		return err
	}
	data, _ := json.Marshal(Intent{Task: task, Item: item, Holder: holder, Since: now.UTC().Truncate(time.Millisecond).Format("2006-01-02T15:04:05.000Z")})
	return atomicfile.Replace(m.intentPath(task), data, atomicfile.Options{})
}

// PendingIntent returns the intent a start of task left, or nil.
func (m *Manager) PendingIntent(task string) (*Intent, error) {
	if err := CheckTaskID(task); err != nil {
		return nil, err
	}
	b, err := osproc.ReadRegular(m.intentPath(task), 64<<10)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, apperr.Wrap(apperr.Internal, err, "cannot read the start intent of task %s", task)
	}
	var in Intent
	if json.Unmarshal(b, &in) != nil || in.Task != task {
		// A torn or foreign file is no evidence of anything.
		return nil, nil
	}
	return &in, nil
}

// Covers reports whether a claim of item by holder, acquired at acquired
// (RFC 3339), is the one this intent's start made.
func (in *Intent) Covers(item, holder, acquired string) bool {
	if in == nil || in.Item != item || in.Holder != holder {
		return false
	}
	since, err1 := time.Parse(time.RFC3339Nano, in.Since)
	at, err2 := time.Parse(time.RFC3339Nano, acquired)
	return err1 == nil && err2 == nil && !at.Before(since)
}

// ForgetIntent removes task's intent.
func (m *Manager) ForgetIntent(task string) error {
	if err := os.Remove(m.intentPath(task)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return apperr.Wrap(apperr.Write, err, "cannot remove the start intent of task %s", task)
	}
	return nil
}
