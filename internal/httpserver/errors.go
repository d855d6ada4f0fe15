package httpserver

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/seed1cedbf7c/ckpt"
)

// Error is the body of every failed request: a stable code, the message
// ckpt prints for the same error (without "ckpt: "), the hint when there
// is one, and the exit status the CLI ends with for it.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
	// Exit is the ckpt command's exit status for the same error: 1 error,
	// 2 usage, 3 integrity failure.
	Exit int `json:"exit"`
}

// apiError is an error with its HTTP status and code, made by the server
// itself (a bad parameter, a missing token) rather than by the engine.
type apiError struct {
	status int
	code   string
	msg    string
	hint   string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(msg string) error {
	return &apiError{status: http.StatusBadRequest, code: "bad_request", msg: msg}
}

func forbidden(code, msg, hint string) error {
	return &apiError{status: http.StatusForbidden, code: code, msg: msg, hint: hint}
}

// classify maps an error to its HTTP status and body. The statuses follow
// the CLI's exit statuses: a usage error (exit 2) is 400, an integrity
// failure (exit 3: a corrupt store, a restore that does not verify) is
// 500 with code "integrity", and the errors that exit 1 are told apart
// where a client can act on the difference: not found 404, already
// exists or nothing to undo 409, the store busy 503, no space 507.
func classify(err error) (int, Error) {
	body := Error{Message: err.Error(), Hint: ckpt.Hint(err), Exit: 1}
	var ae *apiError
	var ne *ckpt.NameError
	var re *ckpt.RevisionError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &ae):
		body.Code, body.Hint = ae.code, ae.hint
		if ae.status == http.StatusBadRequest {
			body.Exit = 2
		}
		return ae.status, body
	case errors.As(err, &mbe):
		body.Code = "too_large"
		body.Message = "request body larger than the limit"
		return http.StatusRequestEntityTooLarge, body
	case errors.Is(err, ckpt.ErrCorrupt), errors.Is(err, ckpt.ErrIntegrity):
		body.Code, body.Exit = "integrity", 3
		return http.StatusInternalServerError, body
	case errors.As(err, &ne), errors.Is(err, ckpt.ErrInvalidSnapshotName):
		body.Code, body.Exit = "bad_request", 2
		return http.StatusBadRequest, body
	case errors.As(err, &re) && re.Ambiguous:
		body.Code = "ambiguous"
		return http.StatusBadRequest, body
	case errors.Is(err, ckpt.ErrNotFound), errors.Is(err, ckpt.ErrNoSession):
		body.Code = "not_found"
		return http.StatusNotFound, body
	case errors.Is(err, ckpt.ErrExists):
		body.Code = "exists"
		return http.StatusConflict, body
	case errors.Is(err, ckpt.ErrNothingToUndo), errors.Is(err, ckpt.ErrNothingToRedo):
		body.Code = "nothing_to_do"
		return http.StatusConflict, body
	case errors.Is(err, ckpt.ErrLocked):
		body.Code = "locked"
		return http.StatusServiceUnavailable, body
	case errors.Is(err, ckpt.ErrNotWritable):
		body.Code = "not_writable"
		return http.StatusForbidden, body
	case errors.Is(err, ckpt.ErrFull):
		body.Code = "no_space"
		return http.StatusInsufficientStorage, body
	}
	body.Code = "error"
	return http.StatusInternalServerError, body
}

// writeError answers a request with err as JSON.
func writeError(w http.ResponseWriter, err error) {
	status, body := classify(err)
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, status, body)
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}
