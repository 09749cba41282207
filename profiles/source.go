package profiles

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// This file reads a table file (CSV or Parquet) one row at a time behind one
// small interface, so that every table decoder is written once and reports
// errors the same way whichever format the file is in.

// cell is one value of a row: text (a CSV field or a Parquet string) or a
// number (a Parquet integer or floating-point column).
type cell struct {
	null  bool // empty CSV field, Parquet null, or column absent
	text  string
	isNum bool
	isInt bool
	i     int64
	f     float64
}

// rowSource yields the rows of one table file.
type rowSource interface {
	columns() []string
	// next returns the next row's cells, indexed like columns(), or io.EOF.
	next() ([]cell, error)
}

// openSource opens data as CSV or Parquet, chosen by the file name's suffix.
func openSource(name string, data []byte) (rowSource, error) {
	switch {
	case strings.HasSuffix(name, ".csv"):
		return newCSVSource(data)
	case strings.HasSuffix(name, ".parquet"):
		return newParquetSource(data)
	}
	return nil, fmt.Errorf("unknown table format (want .csv or .parquet)")
}

type csvSource struct {
	r     *csv.Reader
	cols  []string
	cells []cell
}

func newCSVSource(data []byte) (*csvSource, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // UTF-8 BOM from spreadsheets
	r := csv.NewReader(bytes.NewReader(data))
	r.ReuseRecord = true
	r.Comment = '#'
	header, err := r.Read()
	if err == io.EOF {
		return nil, errors.New("empty file (no header line)")
	}
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	cols := make([]string, len(header))
	for i, h := range header {
		cols[i] = strings.ToLower(strings.TrimSpace(h))
	}
	return &csvSource{r: r, cols: cols, cells: make([]cell, len(cols))}, nil
}

func (s *csvSource) columns() []string { return s.cols }

func (s *csvSource) next() ([]cell, error) {
	rec, err := s.r.Read()
	if err != nil {
		return nil, err
	}
	for i := range s.cells {
		s.cells[i] = cell{null: true}
		if i < len(rec) {
			if t := strings.TrimSpace(rec[i]); t != "" {
				s.cells[i] = cell{text: t}
			}
		}
	}
	return s.cells, nil
}

type parquetSource struct {
	groups []parquet.RowGroup
	rows   parquet.Rows
	buf    []parquet.Row
	n, at  int
	cols   []string
	cells  []cell
}

func newParquetSource(data []byte) (*parquetSource, error) {
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	var cols []string
	for _, path := range f.Schema().Columns() {
		if len(path) != 1 {
			return nil, fmt.Errorf("nested column %s: want a flat schema", strings.Join(path, "."))
		}
		cols = append(cols, strings.ToLower(path[0]))
	}
	return &parquetSource{
		groups: f.RowGroups(),
		buf:    make([]parquet.Row, 256),
		cols:   cols,
		cells:  make([]cell, len(cols)),
	}, nil
}

func (s *parquetSource) columns() []string { return s.cols }

func (s *parquetSource) next() ([]cell, error) {
	for s.at >= s.n {
		if err := s.fill(); err != nil {
			return nil, err
		}
	}
	row := s.buf[s.at]
	s.at++
	for i := range s.cells {
		s.cells[i] = cell{null: true}
	}
	for _, v := range row {
		c := v.Column()
		if c < 0 || c >= len(s.cells) || v.IsNull() {
			continue
		}
		switch v.Kind() {
		case parquet.Int32, parquet.Int64:
			s.cells[c] = cell{isNum: true, isInt: true, i: v.Int64()}
		case parquet.Float, parquet.Double:
			s.cells[c] = cell{isNum: true, f: v.Double()}
		case parquet.Boolean:
			s.cells[c] = cell{text: strconv.FormatBool(v.Boolean())}
		case parquet.ByteArray, parquet.FixedLenByteArray:
			s.cells[c] = cell{text: string(v.ByteArray())}
		}
	}
	return s.cells, nil
}

// fill reads the next batch of rows, moving to the next row group as needed.
func (s *parquetSource) fill() error {
	for {
		if s.rows == nil {
			if len(s.groups) == 0 {
				return io.EOF
			}
			s.rows = s.groups[0].Rows()
			s.groups = s.groups[1:]
		}
		n, err := s.rows.ReadRows(s.buf)
		s.n, s.at = n, 0
		if err == io.EOF || (err == nil && n == 0) {
			s.rows.Close()
			s.rows = nil
			if n > 0 {
				return nil
			}
			continue
		}
		return err
	}
}

// rowView reads named columns of the current row and remembers the first
// conversion error, so decoders stay a flat list of field reads.
type rowView struct {
	index map[string]int
	cells []cell
	err   error
}

func (r *rowView) get(col string) cell {
	if i, ok := r.index[col]; ok && i < len(r.cells) {
		return r.cells[i]
	}
	return cell{null: true}
}

func (r *rowView) fail(col, format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%s: "+format, append([]any{col}, args...)...)
	}
}

// str returns the column as text ("" when empty or absent).
func (r *rowView) str(col string) string {
	c := r.get(col)
	switch {
	case c.null:
		return ""
	case c.isInt:
		return strconv.FormatInt(c.i, 10)
	case c.isNum:
		return strconv.FormatFloat(c.f, 'g', -1, 64)
	}
	return c.text
}

// int returns the column as an integer; an empty cell is 0 when optional.
func (r *rowView) int(col string, optional bool) int64 {
	c := r.get(col)
	switch {
	case c.null:
		if !optional {
			r.fail(col, "empty")
		}
		return 0
	case c.isInt:
		return c.i
	case c.isNum:
		if c.f != math.Trunc(c.f) || math.Abs(c.f) > 1<<53 {
			r.fail(col, "not an integer (%v)", c.f)
		}
		return int64(c.f)
	}
	v, err := strconv.ParseInt(c.text, 10, 64)
	if err != nil {
		// Accept "4096.0" as written by some CSV writers.
		f, ferr := strconv.ParseFloat(c.text, 64)
		if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			r.fail(col, "not an integer (%q)", c.text)
			return 0
		}
		return int64(f)
	}
	return v
}

// float returns the column as a number; an empty cell is 0 when optional.
func (r *rowView) float(col string, optional bool) float64 {
	c := r.get(col)
	switch {
	case c.null:
		if !optional {
			r.fail(col, "empty")
		}
		return 0
	case c.isInt:
		return float64(c.i)
	case c.isNum:
		return c.f
	}
	v, err := strconv.ParseFloat(c.text, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		r.fail(col, "not a number (%q)", c.text)
		return 0
	}
	return v
}

// latency reads a latency column in milliseconds, which must be > 0 when
// required and >= 0 when optional.
func (r *rowView) latency(col string, optional bool) float64 {
	v := r.float(col, optional)
	if v < 0 || (!optional && v == 0 && r.err == nil) {
		r.fail(col, "latency must be positive milliseconds, got %v", v)
	}
	return v
}
