import Testing
@testable import TransferDaemon
#if canImport(Glibc)
import Glibc
#endif

/// The listeners' connection limits and their logging of failed accepts, without sockets.
@Suite("Connection slots")
struct ConnectionSlotsTests {
    @Test func aListenerWithoutPeersAdmitsUpToItsLimitAndAgainAfterARelease() {
        var slots = ConnectionSlots()
        for _ in 0..<3 { #expect(slots.admit(user: nil, limit: 3) == .admitted) }
        #expect(slots.admit(user: nil, limit: 3) == .full(limit: 3))
        #expect(slots.total == 3, "a refusal takes no slot")
        slots.release(user: nil)
        #expect(slots.admit(user: nil, limit: 3) == .admitted)
    }

    @Test func oneUsersShareLeavesRoomForOthers() {
        var slots = ConnectionSlots()
        for _ in 0..<4 { #expect(slots.admit(user: 1000, limit: 64, perUser: 4) == .admitted) }
        for _ in 0..<76 { #expect(slots.admit(user: 1000, limit: 64, perUser: 4) == .userFull(limit: 4)) }
        #expect(slots.admit(user: 1001, limit: 64, perUser: 4) == .admitted)
        #expect(slots.held(by: 1000) == 4)
        #expect(slots.total == 5)
        slots.release(user: 1000)
        #expect(slots.held(by: 1000) == 3)
        #expect(slots.admit(user: 1000, limit: 64, perUser: 4) == .admitted)
    }

    @Test func theTotalLimitHoldsWhateverTheUsers() {
        var slots = ConnectionSlots()
        for user in UInt32(0)..<8 { #expect(slots.admit(user: user, limit: 8, perUser: 2) == .admitted) }
        #expect(slots.admit(user: 100, limit: 8, perUser: 2) == .full(limit: 8))
        for user in UInt32(0)..<8 { slots.release(user: user) }
        #expect(slots == ConnectionSlots(), "every count is back to nothing")
    }

    @Test func aRunOfFailedAcceptsIsLoggedOnceAndItsEndOnce() {
        let second: UInt64 = 1_000_000_000
        var episode = AcceptFailureEpisode()
        #expect(episode.accepted(at: 0) == nil)
        let first = episode.failed(at: 10 * second)
        #expect(first)
        for tick in UInt64(1)...1000 {
            let later = episode.failed(at: 10 * second + tick * 1_000_000)
            #expect(!later)
            // A descriptor freed now and then lets one accept through: the run goes on.
            if tick % 100 == 0 { #expect(episode.accepted(at: 10 * second + tick * 1_000_000 + 1) == nil) }
        }
        #expect(episode.accepted(at: 12 * second) == nil, "not quiet long enough yet")
        #expect(episode.accepted(at: 16 * second) == 1001)
        #expect(episode.accepted(at: 17 * second) == nil)
        let again = episode.failed(at: 20 * second)
        #expect(again, "a new run is logged again")
    }

    @Test func onlyResourceShortagesAreRetried() {
        for code in [EMFILE, ENFILE, ENOBUFS, ENOMEM] { #expect(AcceptFailureEpisode.isResourceShortage(code)) }
        for code in [EBADF, EINVAL, ENOTSOCK] { #expect(!AcceptFailureEpisode.isResourceShortage(code)) }
    }
}
