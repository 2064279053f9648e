import TransferCore
import TransferProtocol

/// The core's refusals as the wire answers them: each kind has its stable JSON-RPC code, and a
/// request parameter the message names is spelled with the `transferctl` flag that sets it.
extension RPCError {
    init(_ error: CoreError) {
        self.init(Self.code(for: error.kind), error.explanation.rendered(naming: Self.spelling(of:)))
    }

    /// The JSON-RPC code of each kind of core error.
    static func code(for kind: CoreError.Kind) -> RPCErrorCode {
        switch kind {
        case .invalidParameter: return .invalidParams
        case .unsupportedURL: return .unsupportedURL
        case .invalidHeader: return .invalidHeader
        case .invalidDestination: return .invalidDestination
        case .destinationExists: return .destinationExists
        case .destinationBusy: return .destinationBusy
        case .insufficientSpace: return .insufficientSpace
        case .hostNotAllowed: return .hostNotAllowed
        case .noSuchJob: return .noSuchJob
        case .jobFinished: return .jobFinished
        case .idConflict: return .idConflict
        case .jobNotFinished: return .jobNotFinished
        case .jobExists: return .jobExists
        case .shuttingDown: return .shuttingDown
        case .limitReached: return .limitExceeded
        case .notPermitted: return .notPermitted
        case .internalFailure: return .internalError
        }
    }

    /// A parameter as an answer names it: its wire name, and the flag that sets it when
    /// `transferctl` has one, for the user who typed the command.
    static func spelling(of parameter: CoreMessage.Parameter) -> String {
        switch parameter {
        case .submitOverwrite: return "overwrite (transferctl submit --overwrite)"
        case .statusAll: return "all (transferctl status --all-users)"
        case .statusOwner: return "owner (transferctl status --owner)"
        case .statusLimit: return "limit (transferctl status --limit)"
        case .subscribeAll: return "all (transferctl watch --all-users)"
        default: return parameter.name
        }
    }
}
