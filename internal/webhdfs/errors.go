package webhdfs

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/auth"
)

// RemoteException is WebHDFS's error body and the HTTP status it goes
// with (Hadoop's ExceptionHandler: IllegalArgumentException and
// UnsupportedOperationException 400, SecurityException 401, IOException
// 403 (SecretManager.InvalidToken is one), FileNotFoundException 404,
// RuntimeException 500).
type RemoteException struct {
	Status        int    `json:"-"`
	Exception     string `json:"exception"`
	JavaClassName string `json:"javaClassName"`
	Message       string `json:"message"`
}

func (e *RemoteException) Error() string { return e.Exception + ": " + e.Message }

// Java exception classes WebHDFS clients recognise by name.
var javaClass = map[string]string{
	"IllegalArgumentException":            "java.lang.IllegalArgumentException",
	"UnsupportedOperationException":       "java.lang.UnsupportedOperationException",
	"SecurityException":                   "java.lang.SecurityException",
	"IOException":                         "java.io.IOException",
	"FileNotFoundException":               "java.io.FileNotFoundException",
	"RuntimeException":                    "java.lang.RuntimeException",
	"AccessControlException":              "org.apache.hadoop.security.AccessControlException",
	"FileAlreadyExistsException":          "org.apache.hadoop.fs.FileAlreadyExistsException",
	"ParentNotDirectoryException":         "org.apache.hadoop.fs.ParentNotDirectoryException",
	"PathIsNotEmptyDirectoryException":    "org.apache.hadoop.fs.PathIsNotEmptyDirectoryException",
	"NSQuotaExceededException":            "org.apache.hadoop.hdfs.protocol.NSQuotaExceededException",
	"DSQuotaExceededException":            "org.apache.hadoop.hdfs.protocol.DSQuotaExceededException",
	"QuotaByStorageTypeExceededException": "org.apache.hadoop.hdfs.protocol.QuotaByStorageTypeExceededException",
	"AlreadyBeingCreatedException":        "org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException",
	"SafeModeException":                   "org.apache.hadoop.hdfs.server.namenode.SafeModeException",
	"RetriableException":                  "org.apache.hadoop.ipc.RetriableException",
	"StandbyException":                    "org.apache.hadoop.ipc.StandbyException",
	"InvalidToken":                        "org.apache.hadoop.security.token.SecretManager$InvalidToken",
	"HadoopIllegalArgumentException":      "org.apache.hadoop.HadoopIllegalArgumentException",
	"SnapshotException":                   "org.apache.hadoop.hdfs.protocol.SnapshotException",
	"AuthorizationException":              "org.apache.hadoop.security.authorize.AuthorizationException",
	"SnapshotAccessControlException":      "org.apache.hadoop.hdfs.protocol.SnapshotAccessControlException",
	"InvalidPathException":                "org.apache.hadoop.fs.InvalidPathException",
	"RecoveryInProgressException":         "org.apache.hadoop.hdfs.protocol.RecoveryInProgressException",
	"UnsupportedActionException":          "org.apache.hadoop.hdfs.server.namenode.UnsupportedActionException",
}

// statusOf is the HTTP status Hadoop's ExceptionHandler gives an
// exception name.
func statusOf(exception string) int {
	switch exception {
	case "IllegalArgumentException", "UnsupportedOperationException", "HadoopIllegalArgumentException", "InvalidPathException":
		return http.StatusBadRequest
	case "SecurityException":
		return http.StatusUnauthorized
	case "FileNotFoundException":
		return http.StatusNotFound
	case "RuntimeException":
		return http.StatusInternalServerError
	case "RetriableException":
		return http.StatusServiceUnavailable
	}
	return http.StatusForbidden // every other one is an IOException
}

// Exception builds the RemoteException of a Java exception name.
func Exception(name, msg string) *RemoteException {
	class := javaClass[name]
	if class == "" {
		class = "java.io.IOException"
	}
	return &RemoteException{Status: statusOf(name), Exception: name, JavaClassName: class, Message: msg}
}

// IllegalArgument is HTTP 400 IllegalArgumentException.
func IllegalArgument(msg string) *RemoteException { return Exception("IllegalArgumentException", msg) }

// Unsupported is HTTP 400 UnsupportedOperationException.
func Unsupported(msg string) *RemoteException {
	return Exception("UnsupportedOperationException", msg)
}

// paramError words a bad parameter as Hadoop's ExceptionHandler does.
func paramError(name, msg string) *RemoteException {
	return IllegalArgument(`Invalid value for webhdfs parameter "` + name + `": ` + msg)
}

// FromError converts an error from the namenode (a gRPC status, see the
// code table in dfs.proto) or from the client library into the exception
// HDFS raises for the same condition.
func FromError(err error) *RemoteException {
	var re *RemoteException
	if errors.As(err, &re) {
		return re
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return Exception("IOException", err.Error())
	}
	st, ok := status.FromError(err)
	if !ok {
		return fromClient(err)
	}
	msg := st.Message()
	lower := strings.ToLower(msg)
	switch st.Code() {
	case codes.NotFound:
		return Exception("FileNotFoundException", msg)
	case codes.PermissionDenied:
		return denied(msg)
	case codes.AlreadyExists:
		return Exception("FileAlreadyExistsException", msg)
	case codes.InvalidArgument:
		if strings.Contains(lower, "snapshot") {
			return Exception("SnapshotException", msg)
		}
		return Exception("IllegalArgumentException", msg)
	case codes.Unimplemented:
		return Exception("UnsupportedOperationException", msg)
	case codes.Unauthenticated:
		return Exception("SecurityException", msg)
	case codes.Unavailable:
		if strings.Contains(lower, "safe mode") {
			return Exception("SafeModeException", msg)
		}
		return Exception("RetriableException", msg)
	case codes.FailedPrecondition:
		return precondition(msg, lower)
	case codes.Internal, codes.Unknown, codes.DataLoss:
		return Exception("RuntimeException", msg)
	}
	return Exception("IOException", msg)
}

// denied is AccessControlException, or its snapshot subclass for a write
// into a read-only snapshot path.
func denied(msg string) *RemoteException {
	if strings.Contains(msg, "read-only snapshot") {
		return Exception("SnapshotAccessControlException", msg)
	}
	return Exception("AccessControlException", msg)
}

// fromClient maps the client library's errors (the datanode side moves
// bytes through it), which wrap io/fs sentinels.
func fromClient(err error) *RemoteException {
	msg := err.Error()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Exception("FileNotFoundException", msg)
	case errors.Is(err, fs.ErrExist):
		return Exception("FileAlreadyExistsException", msg)
	case errors.Is(err, fs.ErrPermission):
		return denied(msg)
	case errors.Is(err, fs.ErrInvalid):
		return Exception("IllegalArgumentException", msg)
	case errors.Is(err, errors.ErrUnsupported):
		return Exception("UnsupportedOperationException", msg)
	case strings.Contains(msg, auth.ErrUnauthenticated.Error()):
		// The namenode refused the redirect's token (the client keeps
		// the words, not the code).
		return Exception("SecurityException", msg)
	}
	return precondition(msg, strings.ToLower(msg))
}

// precondition sorts FailedPrecondition by its wording, as the Go client
// does (dfs.proto covers several HDFS exceptions with the one code).
func precondition(msg, lower string) *RemoteException {
	switch {
	case strings.Contains(lower, "namespace quota") && strings.Contains(lower, "is exceeded"):
		return Exception("NSQuotaExceededException", msg)
	case strings.Contains(lower, "quota by storage type") && strings.Contains(lower, "is exceeded"):
		return Exception("QuotaByStorageTypeExceededException", msg)
	case strings.Contains(lower, " quota") && strings.Contains(lower, "is exceeded"):
		return Exception("DSQuotaExceededException", msg)
	case strings.Contains(lower, "not empty"):
		return Exception("PathIsNotEmptyDirectoryException", msg)
	case strings.Contains(lower, "not a directory"):
		return Exception("ParentNotDirectoryException", msg)
	case strings.Contains(lower, "is a directory"), strings.Contains(lower, "not a file"):
		return Exception("FileNotFoundException", msg)
	case strings.Contains(lower, "snapshot"):
		return Exception("SnapshotException", msg)
	case strings.Contains(lower, "lease"), strings.Contains(lower, "being written"), strings.Contains(lower, "under construction"),
		strings.Contains(lower, "being created"):
		return Exception("AlreadyBeingCreatedException", msg)
	case strings.Contains(lower, "recovery"):
		return Exception("RecoveryInProgressException", msg)
	}
	return Exception("IOException", msg)
}

// WriteError sends e as WebHDFS does.
func WriteError(w http.ResponseWriter, e *RemoteException) {
	writeJSON(w, e.Status, map[string]any{"RemoteException": e})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"RemoteException":{"exception":"RuntimeException","javaClassName":"java.lang.RuntimeException","message":"encoding the response failed"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// WriteJSON sends a 200 JSON body.
func WriteJSON(w http.ResponseWriter, v any) { writeJSON(w, http.StatusOK, v) }
