import Foundation
import Testing
import TransferCore
import TransferProtocol
@testable import TransferDaemon

/// How the daemon answers the core's refusals on the wire: the code, its name, and the message.
@Suite("Core errors on the wire")
struct CoreErrorMappingTests {
    @Test(arguments: [
        (CoreError.Kind.invalidParameter("sha256"), -32602, "invalid_params"),
        (.invalidParameter("retry.max_attempts"), -32602, "invalid_params"),
        (.unsupportedURL, 1001, "unsupported_url"),
        (.invalidDestination, 1002, "invalid_destination"),
        (.destinationExists, 1003, "destination_exists"),
        (.noSuchJob, 1004, "no_such_job"),
        (.jobFinished, 1005, "job_finished"),
        (.idConflict, 1006, "id_conflict"),
        (.invalidHeader, 1007, "invalid_header"),
        (.shuttingDown, 1008, "shutting_down"),
        (.limitReached("max_jobs_per_user"), 1009, "limit_exceeded"),
        (.destinationBusy, 1010, "destination_busy"),
        (.insufficientSpace, 1011, "insufficient_space"),
        (.hostNotAllowed, 1013, "host_not_allowed"),
        (.notPermitted, 1014, "not_permitted"),
        (.internalFailure, -32603, "internal_error"),
    ])
    func eachKindHasItsStableCode(kind: CoreError.Kind, code: Int, name: String) {
        let answer = RPCError(CoreError(kind, "what happened: what to do"))
        #expect(answer.code.rawValue == code)
        #expect(answer.data?.name == name)
        #expect(answer.message == "what happened: what to do")
    }

    /// The core names the parameter; the answer adds the flag a `transferctl` user would type.
    @Test(arguments: [
        (
            CoreError(.destinationExists, "destination /srv/a.iso already exists: remove it, or submit with \(parameter: .submitOverwrite) to replace it"),
            "destination /srv/a.iso already exists: remove it, or submit with overwrite to replace it",
            "destination /srv/a.iso already exists: remove it, or submit with overwrite (transferctl submit --overwrite) to replace it"
        ),
        (
            CoreError(.notPermitted, "only root may list every user's jobs: leave out \(parameter: .statusAll) to list yours"),
            "only root may list every user's jobs: leave out all to list yours",
            "only root may list every user's jobs: leave out all (transferctl status --all-users) to list yours"
        ),
        (
            CoreError(.notPermitted, "only root may follow every user's jobs: leave out \(parameter: .subscribeAll) to follow yours"),
            "only root may follow every user's jobs: leave out all to follow yours",
            "only root may follow every user's jobs: leave out all (transferctl watch --all-users) to follow yours"
        ),
        (
            CoreError(.invalidParameter("x"), "give \(parameter: CoreMessage.Parameter(method: Cancel.name, name: "id"))"),
            "give id",
            "give id"
        ),
    ])
    func aNamedParameterGetsItsFlagOnTheWire(error: CoreError, core: String, wire: String) {
        #expect(error.message == core)
        #expect(!error.message.contains("--"), "the core names no command-line flag")
        #expect(RPCError(error).message == wire)
    }

    /// The whole answer line, byte for byte, as docs/protocol.md shows it.
    @Test func theAnswerLineIsUnchanged() throws {
        let error = CoreError(
            .destinationExists,
            "destination /srv/transferd/isos/big.iso already exists: remove it, or submit with \(parameter: .submitOverwrite) to replace it")
        let line = String(decoding: try WireCoding.encoder().encode(RPCFailure(id: .number(7), error: RPCError(error))), as: UTF8.self)
        #expect(
            line
                == #"{"error":{"code":1003,"data":{"name":"destination_exists"},"message":"destination /srv/transferd/isos/big.iso already exists: remove it, or submit with overwrite (transferctl submit --overwrite) to replace it"},"id":7,"jsonrpc":"2.0"}"#)
    }
}
