package sqlitetable

import (
	"database/sql"
	"errors"
	"fmt"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/docpipe/docpipe/pipeline/table"
)

// interpretError maps native errors onto the table sentinels.
func interpretError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrNoRows) {
		return table.ErrNotFound
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff { // primary result code
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return fmt.Errorf("%w: %v", table.ErrTransactionConflict, err)
		}
	}
	return err
}

// isConstraint reports whether err is SQLite refusing a write that would
// break a constraint: for an INSERT, a row with the same key exists.
func isConstraint(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_CONSTRAINT
}

// single turns a one-action transaction's cancellation into a plain
// condition failure.
func single(op string, key table.Key, err error) error {
	if err == nil {
		return nil
	}
	var tx *table.TxCanceledError
	if errors.As(err, &tx) {
		err = table.ErrConditionFailed
	}
	return fmt.Errorf("sqlitetable: %s %s: %w", op, key, err)
}
