package paging

import (
	"errors"
	"strings"
	"testing"

	"github.com/ideate/git-ideate/internal/apperr"
)

func TestTrim(t *testing.T) {
	size := func(v any) (int, error) { return len(v.(string)), nil }
	big := strings.Repeat("x", Budget/2)
	tests := []struct {
		name    string
		rows    []string
		measure Measure
		keep    int
		cut     bool
	}{
		{"NilMeasure_KeepsAll", []string{big, big, big}, nil, 3, false},
		{"Empty_NothingCut", nil, size, 0, false},
		{"AllFit_NoCut", []string{"a", "b"}, size, 2, false},
		{"ExactlyBudget_NoCut", []string{big, big}, size, 2, false},
		{"OverBudget_Cut", []string{big, big, "a"}, size, 2, true},
		{"FirstAloneOver_KeptAndCut", []string{big + big + "x", "a"}, size, 1, true},
		{"CompactLen_CountsQuotes", []string{big, big[4:], "y"}, CompactLen, 2, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kept, cut, err := Trim(tc.rows, tc.measure)
			if err != nil {
				t.Fatal(err)
			}
			if len(kept) != tc.keep || cut != tc.cut {
				t.Fatalf("Trim kept %d, cut %v; want %d, %v", len(kept), cut, tc.keep, tc.cut)
			}
		})
	}
}

func TestTrim_MeasureError(t *testing.T) {
	boom := errors.New("boom")
	calls := 0
	_, _, err := Trim([]int{1, 2, 3}, func(any) (int, error) {
		calls++
		if calls == 2 {
			return 0, boom
		}
		return 1, nil
	})
	if !errors.Is(err, boom) || calls != 2 {
		t.Fatalf("Trim = %v after %d calls; want boom after 2", err, calls)
	}
}

func TestPosition(t *testing.T) {
	if key, err := Position("", "record", "f", 1); key != nil || err != nil {
		t.Fatalf("Position(no cursor) = %v, %v; want nil, nil", key, err)
	}
	c := EncodeCursor("record", "f", []string{"01J0000000000000000000000A"})
	if key, err := Position(c, "record", "f", 1); err != nil || len(key) != 1 || key[0] != "01J0000000000000000000000A" {
		t.Fatalf("Position(cursor) = %v, %v", key, err)
	}
	if _, err := Position(c, "record", "other", 1); !apperr.Is(err, apperr.CursorMismatch) {
		t.Fatalf("Position(cursor, other filter) = %v; want CURSOR_MISMATCH", err)
	}
	if _, err := Position("!", "record", "f", 1); !apperr.Is(err, apperr.Schema) {
		t.Fatalf("Position(garbage) = %v; want SCHEMA", err)
	}
}

func TestFinish(t *testing.T) {
	size := func(v any) (int, error) { return len(v.(string)), nil }
	key := func(last string) []string { return []string{last[:1]} }
	big := strings.Repeat("b", Budget)
	tests := []struct {
		name    string
		rows    []string
		more    bool
		measure Measure
		keep    int
		next    string // "" = no cursor
	}{
		{"Exhausted_NoCursor", []string{"a1", "c2"}, false, size, 2, ""},
		{"More_CursorFromLast", []string{"a1", "c2"}, true, size, 2, "c"},
		{"BudgetCut_CursorFromLastKept", []string{"a1", big, "z"}, false, size, 1, "a"},
		{"NoMeasure_NoCut", []string{"a1", big, "z"}, false, nil, 3, ""},
		{"Empty_NoCursorEvenWithMore", []string{}, true, size, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows, next, err := Finish(tc.rows, tc.more, tc.measure, "record", "f", key)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != tc.keep || rows == nil {
				t.Fatalf("Finish kept %d rows (nil: %v); want %d, never nil", len(rows), rows == nil, tc.keep)
			}
			switch {
			case tc.next == "" && next != nil:
				t.Fatalf("Finish minted a cursor; want none")
			case tc.next != "" && next == nil:
				t.Fatalf("Finish minted no cursor; want one at %q", tc.next)
			case tc.next != "":
				if k, err := DecodeCursor(*next, "record", "f", 1); err != nil || k[0] != tc.next {
					t.Fatalf("cursor decodes to %v, %v; want [%s]", k, err, tc.next)
				}
			}
		})
	}
	boom := errors.New("boom")
	if _, _, err := Finish([]string{"a"}, true, func(any) (int, error) { return 0, boom }, "record", "f", key); !errors.Is(err, boom) {
		t.Fatalf("Finish with a failing measure = %v; want boom", err)
	}
}
