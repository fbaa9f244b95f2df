package telemetry

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/ideate/git-ideate/internal/apperr"
)

// Totals holds one number per report row. Redactions is the sum of the
// events' counts; FrontierSize is the number of samples; priming is split
// by kind.
type Totals struct {
	CaptureFired       int `json:"capture_fired"`
	CaptureWriteFailed int `json:"capture_write_failed"`
	PrimingRequested   int `json:"priming_requested"`
	PrimingUsefulness  int `json:"priming_usefulness"`
	KGUnreachable      int `json:"kg_unreachable"`
	FrontierSize       int `json:"frontier_size"`
	Redactions         int `json:"redactions"`
	WorkClaims         int `json:"work_claims"`
	BoardDegradedOpens int `json:"board_degraded_opens"`
}

// rows names the report rows in order, with their numbers.
func (t *Totals) rows() []row {
	return []row{
		{CaptureFired, t.CaptureFired},
		{CaptureWriteFailed, t.CaptureWriteFailed},
		{Priming + "." + PrimingKindRequested, t.PrimingRequested},
		{Priming + "." + PrimingKindUsefulness, t.PrimingUsefulness},
		{KGUnreachable, t.KGUnreachable},
		{FrontierSize + " (samples)", t.FrontierSize},
		{Redactions, t.Redactions},
		{WorkClaims, t.WorkClaims},
		{BoardDegradedOpens, t.BoardDegradedOpens},
	}
}

type row struct {
	name string
	n    int
}

// Frontier summarises the frontier_size samples (all zero when there are
// none).
type Frontier struct {
	Samples int     `json:"samples"`
	Min     int     `json:"min"`
	Max     int     `json:"max"`
	Mean    float64 `json:"mean"`
	Last    int     `json:"last"`
	sum     float64
}

// Summary is the event file folded into counts. Breakdown maps are never
// nil; an empty point, reason, session or the like is keyed "(none)".
type Summary struct {
	File string `json:"file"`
	// Events is the number of lines folded; BadLines those skipped
	// because they are not a JSON object with a known shape.
	Events   int    `json:"events"`
	BadLines int    `json:"bad_lines"`
	FirstAt  string `json:"first_at"`
	LastAt   string `json:"last_at"`
	Totals   Totals `json:"totals"`

	CapturesByPoint     map[string]int     `json:"capture_fired_by_point"`
	FailuresByPoint     map[string]int     `json:"capture_write_failed_by_point"`
	FailuresByReason    map[string]int     `json:"capture_write_failed_by_reason"`
	PrimingBySource     map[string]int     `json:"priming_requested_by_source"`
	UsefulnessBySignal  map[string]int     `json:"priming_usefulness_by_signal"`
	RedactionsByPattern map[string]int     `json:"redactions_by_pattern"`
	ClaimsByItem        map[string]int     `json:"work_claims_by_item"`
	DegradedOpens       map[string]int     `json:"board_degraded_opens_by_what"`
	BySession           map[string]*Totals `json:"by_session"`
	Frontier            Frontier           `json:"frontier"`
	// Other counts events of counters (or priming kinds) this version does
	// not know, by name: a newer git ideate may have written them.
	Other map[string]int `json:"other"`
}

func newSummary(file string) *Summary {
	return &Summary{File: file,
		CapturesByPoint: map[string]int{}, FailuresByPoint: map[string]int{}, FailuresByReason: map[string]int{},
		PrimingBySource: map[string]int{}, UsefulnessBySignal: map[string]int{}, RedactionsByPattern: map[string]int{},
		ClaimsByItem: map[string]int{}, DegradedOpens: map[string]int{}, BySession: map[string]*Totals{},
		Other: map[string]int{}}
}

// Read folds <stateDir>/telemetry.ndjson. A missing file (or directory)
// is an empty summary.
func Read(stateDir string) (*Summary, error) {
	path := filepath.Join(stateDir, FileName)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return newSummary(path), nil
	}
	if err != nil {
		return nil, apperr.Wrap(apperr.Internal, err, "cannot read %s: %v", path, underlying(err))
	}
	defer f.Close()
	s, err := Fold(f)
	if err != nil {
		return nil, apperr.Wrap(apperr.Internal, err, "cannot read %s: %v", path, underlying(err))
	}
	s.File = path
	return s, nil
}

func underlying(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// maxScan bounds the bytes of one line held in memory; a longer line is
// skipped as unparseable.
const maxScan = 64 * 1024

// Fold reads events, one per line, from r. Blank lines are ignored; lines
// that are not events are counted in BadLines and skipped.
func Fold(r io.Reader) (*Summary, error) {
	s := newSummary("")
	br := bufio.NewReaderSize(r, maxScan)
	tooLong := false
	for {
		line, err := br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			tooLong = true
			continue
		case tooLong:
			tooLong = false
			s.BadLines++
		default:
			if len(bytes.TrimSpace(line)) > 0 {
				s.add(line)
			}
		}
		if err == io.EOF {
			return s, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

type rawEvent struct {
	Counter      string `json:"counter"`
	Kind         string `json:"kind"`
	Point        string `json:"point"`
	Reason       string `json:"reason"`
	Source       string `json:"source"`
	Signal       string `json:"signal"`
	Pattern      string `json:"pattern"`
	ItemID       string `json:"itemId"`
	What         string `json:"what"`
	BoardVersion string `json:"boardVersion"`
	SessionID    string `json:"sessionId"`
	At           string `json:"at"`
	Size         *int   `json:"size"`
	Count        *int   `json:"count"`
}

func none(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func (s *Summary) add(line []byte) {
	var e rawEvent
	if err := json.Unmarshal(line, &e); err != nil || e.Counter == "" {
		s.BadLines++
		return
	}
	switch e.Counter {
	case FrontierSize:
		if e.Size == nil {
			s.BadLines++
			return
		}
	case Redactions:
		if e.Count == nil || *e.Count < 0 {
			s.BadLines++
			return
		}
	}
	s.Events++
	if e.At != "" {
		if s.FirstAt == "" || e.At < s.FirstAt {
			s.FirstAt = e.At
		}
		if e.At > s.LastAt {
			s.LastAt = e.At
		}
	}
	sess := s.BySession[none(e.SessionID)]
	if sess == nil {
		sess = &Totals{}
	}
	known := true
	for _, t := range []*Totals{&s.Totals, sess} {
		switch e.Counter {
		case CaptureFired:
			t.CaptureFired++
		case CaptureWriteFailed:
			t.CaptureWriteFailed++
		case Priming:
			switch e.Kind {
			case PrimingKindRequested:
				t.PrimingRequested++
			case PrimingKindUsefulness:
				t.PrimingUsefulness++
			default:
				known = false
			}
		case KGUnreachable:
			t.KGUnreachable++
		case FrontierSize:
			t.FrontierSize++
		case Redactions:
			t.Redactions += *e.Count
		case WorkClaims:
			t.WorkClaims++
		case BoardDegradedOpens:
			t.BoardDegradedOpens++
		default:
			known = false
		}
	}
	if !known {
		name := e.Counter
		if e.Counter == Priming {
			name += "." + none(e.Kind)
		}
		s.Other[name]++
		return
	}
	s.BySession[none(e.SessionID)] = sess
	switch e.Counter {
	case CaptureFired:
		s.CapturesByPoint[none(e.Point)]++
	case CaptureWriteFailed:
		s.FailuresByPoint[none(e.Point)]++
		s.FailuresByReason[none(e.Reason)]++
	case Priming:
		if e.Kind == PrimingKindRequested {
			s.PrimingBySource[none(e.Source)]++
		} else {
			s.UsefulnessBySignal[none(e.Signal)]++
		}
	case Redactions:
		s.RedactionsByPattern[none(e.Pattern)] += *e.Count
	case WorkClaims:
		s.ClaimsByItem[none(e.ItemID)]++
	case BoardDegradedOpens:
		key := none(e.What)
		if e.BoardVersion != "" {
			key += " (version " + e.BoardVersion + ")"
		}
		s.DegradedOpens[key]++
	case FrontierSize:
		f, n := &s.Frontier, *e.Size
		if f.Samples == 0 || n < f.Min {
			f.Min = n
		}
		if f.Samples == 0 || n > f.Max {
			f.Max = n
		}
		f.Samples++
		f.sum += float64(n)
		f.Mean = f.sum / float64(f.Samples)
		f.Last = n
	}
}

// WriteJSON writes the summary as indented JSON.
func (s *Summary) WriteJSON(w io.Writer) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// WriteText writes the report: every counter's total, the frontier
// statistics, then each non-empty breakdown.
func (s *Summary) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "telemetry: %s\n", display(s.File))
	switch {
	case s.Events == 0:
		fmt.Fprintf(&b, "events: 0\n")
	case s.FirstAt != "":
		fmt.Fprintf(&b, "events: %d, from %s to %s\n", s.Events, display(s.FirstAt), display(s.LastAt))
	default:
		fmt.Fprintf(&b, "events: %d\n", s.Events)
	}
	fmt.Fprintf(&b, "unparseable lines skipped: %d\n", s.BadLines)

	rows := s.Totals.rows()
	table(&b, "counter", "total", rows)
	if f := s.Frontier; f.Samples > 0 {
		fmt.Fprintf(&b, "\nfrontier_size: min %d, max %d, mean %.2f, last %d (%d samples)\n", f.Min, f.Max, f.Mean, f.Last, f.Samples)
	} else {
		fmt.Fprintf(&b, "\nfrontier_size: no samples\n")
	}
	for _, sec := range []struct {
		title string
		m     map[string]int
	}{
		{"capture_fired by point", s.CapturesByPoint},
		{"capture_write_failed by point", s.FailuresByPoint},
		{"capture_write_failed by reason", s.FailuresByReason},
		{"priming.requested by source", s.PrimingBySource},
		{"priming.usefulness by signal", s.UsefulnessBySignal},
		{"redactions by pattern", s.RedactionsByPattern},
		{"work_claims by item", s.ClaimsByItem},
		{"board_degraded_opens by what", s.DegradedOpens},
		{"other counters (written by a newer git ideate?)", s.Other},
	} {
		if len(sec.m) > 0 {
			table(&b, sec.title, "", sorted(sec.m))
		}
	}
	if len(s.BySession) > 0 {
		fmt.Fprintf(&b, "\nby session\n")
		keys := make([]string, 0, len(s.BySession))
		width := 0
		for k := range s.BySession {
			keys = append(keys, k)
			width = max(width, len([]rune(display(k))))
		}
		sort.Strings(keys)
		for _, k := range keys {
			var parts []string
			for _, r := range s.BySession[k].rows() {
				if r.n != 0 {
					parts = append(parts, strings.TrimSuffix(r.name, " (samples)")+" "+strconv.Itoa(r.n))
				}
			}
			fmt.Fprintf(&b, "  %-*s  %s\n", width, display(k), strings.Join(parts, ", "))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// table writes a titled two-column table, numbers right-aligned. An empty
// head leaves the title alone on its line.
func table(b *strings.Builder, title, head string, rows []row) {
	width, nw := 0, len(head)
	for _, r := range rows {
		width = max(width, len([]rune(display(r.name))))
		nw = max(nw, len(strconv.Itoa(r.n)))
	}
	if head == "" {
		fmt.Fprintf(b, "\n%s\n", title)
	} else {
		width = max(width, len([]rune(title))-2)
		fmt.Fprintf(b, "\n%-*s  %*s\n", width+2, title, nw, head)
	}
	for _, r := range rows {
		fmt.Fprintf(b, "  %-*s  %*d\n", width, display(r.name), nw, r.n)
	}
}

// sorted orders a breakdown by count, largest first, then by name.
func sorted(m map[string]int) []row {
	rows := make([]row, 0, len(m))
	for k, n := range m {
		rows = append(rows, row{k, n})
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].n != rows[j].n {
			return rows[i].n > rows[j].n
		}
		return rows[i].name < rows[j].name
	})
	return rows
}

// display quotes a value holding control characters so that one event
// cannot forge report lines.
func display(s string) string {
	for _, c := range s {
		if c < 0x20 || c == 0x7f || c == '\u2028' || c == '\u2029' {
			return strconv.Quote(s)
		}
	}
	return s
}
