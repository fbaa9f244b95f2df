package paging

// DefaultLimit is the page size of a read that names no limit.
const DefaultLimit = 100

// MaxLimit is the largest page size a read serves.
const MaxLimit = 500

// Budget is the number of characters (UTF-16 code units) of serialized items
// one page may carry. The first item of a page is kept even when it alone is
// larger.
const Budget = 40000

// Limit returns the page size for a requested limit: DefaultLimit when n is
// nil, otherwise *n clamped into 1..MaxLimit.
func Limit(n *int) int {
	switch {
	case n == nil:
		return DefaultLimit
	case *n < 1:
		return 1
	case *n > MaxLimit:
		return MaxLimit
	default:
		return *n
	}
}

// Fit returns how many of the leading items fit in budget, given the size of
// each item: the length of the longest prefix whose sizes sum to at most
// budget. It returns at least 1 when sizes is not empty (liveness), and 0 only
// for an empty slice. A negative size counts as 0. The sum cannot overflow.
func Fit(sizes []int, budget int) int {
	if len(sizes) == 0 {
		return 0
	}
	used := 0 // invariant: 0 <= used, and used <= budget once an item is counted
	n := 0
	for _, s := range sizes {
		if s < 0 {
			s = 0
		}
		// used <= budget here whenever n > 0, so budget-used cannot overflow.
		if budget < used || s > budget-used {
			break
		}
		used += s
		n++
	}
	if n == 0 {
		n = 1
	}
	return n
}

// Measure sizes one item as a page counts it: CompactLen for MCP,
// PrettyLen for the CLI.
type Measure func(any) (int, error)

// Trim is the budget step of every paged read: it measures each row and
// keeps the longest prefix that fits Budget by Fit's rule (the first row
// always stays). cut reports whether rows were dropped, in which case the
// caller mints the next cursor from the last row kept. A nil measure keeps
// every row. A measure error is returned as is.
func Trim[T any](rows []T, measure Measure) (kept []T, cut bool, err error) {
	if measure == nil {
		return rows, false, nil
	}
	sizes := make([]int, len(rows))
	for i, r := range rows {
		if sizes[i], err = measure(r); err != nil {
			return nil, false, err
		}
	}
	keep := Fit(sizes, Budget)
	return rows[:keep], keep < len(rows), nil
}

// Finish ends every paged read: it trims rows to the budget (Trim) and,
// when the selection goes on past the last row kept (more, or the budget
// cut), mints the next cursor from that row's keyset position (key). The
// cursor is nil when the selection is exhausted or no row is left.
func Finish[T any](rows []T, more bool, measure Measure, kind, filter string, key func(last T) []string) ([]T, *string, error) {
	rows, cut, err := Trim(rows, measure)
	if err != nil {
		return nil, nil, err
	}
	if !(more || cut) || len(rows) == 0 {
		return rows, nil, nil
	}
	c := EncodeCursor(kind, filter, key(rows[len(rows)-1]))
	return rows, &c, nil
}
