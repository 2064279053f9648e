import Foundation

/// How a login challenge is answered: at most once, with the credentials the request's URL
/// carries; a challenge without them, or a second one (the credentials were wrong), is refused.
enum LoginChallenge: Equatable {
    case credential(user: String, password: String)
    case refuse

    static func answer(method: String, previousFailures: Int, url: URL?) -> LoginChallenge {
        guard previousFailures == 0, let url, let user = url.user(percentEncoded: false), !user.isEmpty else { return .refuse }
        return .credential(user: user, password: url.password(percentEncoded: false) ?? "")
    }
}
