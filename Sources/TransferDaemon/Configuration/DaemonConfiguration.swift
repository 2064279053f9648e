package import Configuration
import Foundation
import Logging
import SystemPackage
package import TransferCore
import TransferProtocol

/// The daemon's settings: defaults, then the JSON file, then `TRANSFERD_*` environment variables,
/// then command-line flags. Every key is documented in `config/README.md`.
package struct DaemonConfiguration: Sendable, Equatable {
    package var maxConcurrentTransfers = 4
    /// Transfers to one host that run at once while jobs to other hosts can start.
    package var maxConnectionsPerHost = 2
    /// Connections a download fetches its file over unless it asks otherwise (`segments`).
    package var segments = 1
    package var finishedJobRetentionSeconds = 7 * 24 * 3600
    package var checkpointBytes = 8 << 20
    package var checkpointIntervalSeconds = 2
    package var idleTimeoutSeconds = 60
    package var socketMode = "0660"
    package var logLevel = "info"
    package var shutdownTimeoutSeconds = 20
    package var maxConnections = 256
    package var retentionSweepSeconds = 60
    package var retryMaxAttempts = 20
    package var retryMaxTimeSeconds = 7 * 24 * 3600
    package var retryInitialDelaySeconds = 1
    package var retryMaxDelaySeconds = 600
    package var lowSpeedBytesPerSecond = 0
    package var lowSpeedSeconds = 60
    package var maxRedirects = 10
    package var diskReserveBytes = 64 << 20
    package var eventRetentionSeconds = 30 * 24 * 3600
    package var subscriberQueueEvents = 1024
    package var maxSubscriptionsPerConnection = 16
    package var subscriberQueueBytesPerUser = 16 << 20
    package var subscriberQueueBytesTotal = 64 << 20
    package var controlIdleTimeoutSeconds = 300
    package var rootReservedConnections = 4
    package var maxRequestBytes = Limits.maxRequestLineBytes
    package var maxConnectionsPerUser = 64
    package var maxJobsPerUser = 10_000
    /// Journal bytes one user's jobs may hold, finished and cancelled ones included.
    package var journalBytesPerUser = 64 << 20
    package var inboxBytesPerUser: Int64 = 8 << 30
    package var maxJsonDepth = Limits.maxJSONDepth
    package var hooks: [HookConfiguration] = []
    /// Entries of `HostRule`'s forms; empty: any host the other rules allow.
    package var allowedHosts: [String] = []
    package var deniedHosts: [String] = []
    /// `auto`, `allow` or `deny`: see `DaemonConfiguration+Hosts.swift`.
    package var localAddresses = "auto"
    /// A group name or gid for the socket file; empty: the daemon's own group.
    package var socketGroup = ""
    package var allowedRoots = AllowedRoots(systemAllowedRoots)
    /// `HOST:PORT` to serve `GET /metrics` on; empty: no listener.
    package var metricsListen = ""
    /// `http_proxy`, `https_proxy`, `no_proxy`: empty leaves libcurl to the environment.
    package var httpProxy = ""
    package var httpsProxy = ""
    package var noProxy = ""
    /// `ca_file`: CA certificates trusted besides the system's bundle; "" for none.
    package var caFile = ""
    /// `client_certificates`: the certificate presented to each host, from the file only.
    package var clientCertificates: [ClientCertificate] = []
    /// Connections the metrics listener serves at once, and how long one may stay idle.
    package var metricsMaxConnections = 16
    package var metricsIdleTimeoutSeconds = 30
    /// Hand-offs of files to upload one user may have open at once, and how long a client may take
    /// to pass its file.
    package var maxUploadHandoffsPerUser = 16
    package var uploadHandoffTimeoutSeconds = 5
    /// Bytes of files to upload the spool holds for one user, and for everyone.
    package var uploadSpoolBytesPerUser = 8 << 30
    package var uploadSpoolBytesTotal = 32 << 30
    /// Files (hand-offs and the copies of unfinished uploads) the spool holds for one user.
    package var uploadSpoolFilesPerUser = 1000
    /// Bytes of an upload's response body kept in the job.
    package var uploadResponseBodyBytes = 64 << 10
    /// Bytes per second all transfers share, and the background class shares; nil: no limit.
    package var maxRate: Int64?
    package var backgroundMaxRate: Int64?
    /// Times of the week with other limits (from the file only).
    package var rateWindows: [RateWindow] = []

    /// The defaults.
    package init() {}

    /// Where the system service's downloads may land unless `allowed_roots` says otherwise.
    static let systemAllowedRoots = ["/srv/transferd"]

    /// Every key the file may hold.
    package static let keys = [
        "max_concurrent_transfers", "finished_job_retention_seconds", "checkpoint_bytes",
        "checkpoint_interval_seconds", "idle_timeout_seconds", "socket_mode", "log_level",
        "shutdown_timeout_seconds", "max_connections", "retention_sweep_seconds",
        "retry_max_attempts", "retry_max_time_seconds", "retry_initial_delay_seconds", "retry_max_delay_seconds",
        "low_speed_bytes_per_second", "low_speed_seconds", "max_redirects", "disk_reserve_bytes", "allowed_roots",
        "event_retention_seconds", "subscriber_queue_events", "max_subscriptions_per_connection", "hooks",
        "max_request_bytes", "max_connections_per_user", "max_jobs_per_user", "max_json_depth",
        "allowed_hosts", "denied_hosts", "local_addresses", "socket_group", "metrics_listen",
        "subscriber_queue_bytes_per_user", "subscriber_queue_bytes_total", "control_idle_timeout_seconds", "root_reserved_connections",
        "upload_spool_bytes_per_user", "upload_spool_bytes_total", "upload_response_body_bytes",
        "max_connections_per_host", "segments",
        "max_rate", "background_max_rate", "rate_windows",
        "metrics_max_connections", "metrics_idle_timeout_seconds", "max_upload_handoffs_per_user", "upload_handoff_timeout_seconds",
        "http_proxy", "https_proxy", "no_proxy", "ca_file", "client_certificates",
        "journal_bytes_per_user", "upload_spool_files_per_user", "inbox_bytes_per_user",
    ]

    var core: CoreConfiguration {
        var retry = RetryPolicy()
        retry.maxAttempts = retryMaxAttempts
        retry.maxTime = .seconds(retryMaxTimeSeconds)
        retry.initialDelay = .seconds(retryInitialDelaySeconds)
        retry.maxDelay = .seconds(retryMaxDelaySeconds)
        retry.idleTimeout = .seconds(idleTimeoutSeconds)
        retry.lowSpeedBytesPerSecond = Int64(lowSpeedBytesPerSecond)
        retry.lowSpeedTime = .seconds(lowSpeedSeconds)
        var core = CoreConfiguration(
            maxConcurrentTransfers: maxConcurrentTransfers,
            finishedJobRetention: .seconds(finishedJobRetentionSeconds),
            retry: retry, diskReserveBytes: Int64(diskReserveBytes), eventRetention: .seconds(eventRetentionSeconds),
            maxJobsPerUser: maxJobsPerUser, allowedRoots: allowedRoots)
        core.maxConnectionsPerHost = maxConnectionsPerHost
        core.segments = segments
        core.journalBytesPerUser = journalBytesPerUser
        core.inboxBytesPerUser = inboxBytesPerUser
        return core
    }

    var engine: EngineConfiguration {
        var engine = EngineConfiguration()
        engine.checkpointBytes = Int64(checkpointBytes)
        engine.checkpointInterval = .seconds(checkpointIntervalSeconds)
        engine.idleTimeout = TimeInterval(idleTimeoutSeconds)
        engine.maxRedirects = maxRedirects
        engine.maximumConnectionsPerHost = max(6, maxConcurrentTransfers)
        engine.uploadResponseBodyBytes = uploadResponseBodyBytes
        return engine
    }

    var spoolQuota: Spool.Quota {
        var quota = Spool.Quota(perUser: Int64(uploadSpoolBytesPerUser), total: Int64(uploadSpoolBytesTotal), diskReserve: Int64(diskReserveBytes))
        quota.filesPerUser = uploadSpoolFilesPerUser
        return quota
    }

    var logLevelValue: Logger.Level { Logger.Level(rawValue: logLevel) ?? .info }

    var socketModeValue: mode_t { mode_t(socketMode, radix: 8) ?? 0o660 }
}

/// A configuration problem, naming the key or file and what to do.
package struct ConfigurationError: Error, CustomStringConvertible {
    package var description: String
}

extension DaemonConfiguration {
    /// `allowed_roots` when none is configured: /srv/transferd for the system service; for a
    /// user's own daemon (root's included), the user's home and /tmp.
    package static func defaultAllowedRoots(role: DaemonRole, environment: [String: String]) -> [String] {
        if role.isSystem { return systemAllowedRoots }
        let home = environment["HOME"].flatMap(AllowedRoots.normalize) ?? AllowedRoots.normalize(FileManager.default.homeDirectoryForCurrentUser.path)
        // A home of / (some service accounts) would allow everything.
        guard let home, home != "/", home != "/tmp" else { return ["/tmp"] }
        return [home, "/tmp"]
    }

    /// Loads the file at `path` (when given, else the role's default file when it exists: the
    /// system's for the system service, `~/.config/transferd/transferd.json` for a user's daemon),
    /// the environment, and `flags` (values given on the command line, by key), each overriding the
    /// one before. `role` decides the defaults of the file and of `allowed_roots`.
    package static func load(
        path explicitPath: String?, environment: [String: String], flags: [String: ConfigContent] = [:],
        role: DaemonRole = .user, uid: UInt32 = getuid()
    ) async throws -> (DaemonConfiguration, String?) {
        let defaultFile = DefaultPaths.configFile(environment: environment, uid: uid, system: role.isSystem)
        var path = explicitPath ?? environment["TRANSFERD_CONFIG"].flatMap { $0.isEmpty ? nil : $0 }
        if path == nil, FileManager.default.fileExists(atPath: defaultFile) {
            path = defaultFile
        }
        var fileKeys: Set<String> = []
        var hooks: [HookConfiguration] = []
        var rateWindows: [RateWindow] = []
        var clientCertificates: [ClientCertificate] = []
        var providers: [any ConfigProvider] = [
            InMemoryProvider(
                name: "flags",
                values: Dictionary(uniqueKeysWithValues: flags.map { (AbsoluteConfigKey([$0.key]), ConfigValue($0.value, isSecret: false)) })),
            // Lists (allowed_roots, allowed_hosts, denied_hosts) are comma-separated: IPv6 addresses hold colons.
            EnvironmentVariablesProvider(environmentVariables: environment, arraySeparator: ",").prefixKeys(with: ["transferd"]),
        ]
        if let path {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ConfigurationError(description: "cannot read the configuration file \(path): check that it exists and is readable, or pass another with --config")
            }
            guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
                throw ConfigurationError(description: "the configuration file \(path) is not a JSON object: see config/transferd.json for the format")
            }
            fileKeys = Set(object.keys)
            if let unknown = fileKeys.subtracting(keys).sorted().first {
                let suggestion = ParameterSuggestion.closest(to: unknown, among: keys).map { "did you mean '\($0)'? " } ?? ""
                throw ConfigurationError(
                    description: "unknown key '\(unknown)' in \(path): \(suggestion)rename or remove it; the known keys are \(keys.joined(separator: ", ")) (config/README.md says what each sets)")
            }
            // Hooks name commands to run, so they come from the file only, never the environment or a client.
            hooks = try HookConfiguration.parse(object["hooks"], file: path)
            rateWindows = try parseRateWindows(object["rate_windows"], file: path)
            clientCertificates = try parseClientCertificates(object["client_certificates"], file: path)
            // Checked here, as the file provider refuses a mixed list without naming the key.
            if let roots = object["allowed_roots"], (roots as? [String])?.isEmpty != false {
                throw ConfigurationError(
                    description: "allowed_roots in \(path) must be a non-empty list of absolute directory paths, such as [\"/srv/transferd\"]")
            }
            providers.append(try await FileProvider<JSONSnapshot>(filePath: .init(path)))
        }
        let reader = ConfigReader(providers: providers)
        func present(_ key: String) -> Bool {
            flags[key] != nil || fileKeys.contains(key) || environment["TRANSFERD_" + key.uppercased()] != nil
        }
        /// Where the value that wins for `key` comes from, for messages.
        func source(_ key: String) -> String {
            if flags[key] != nil { return "--" + key.replacingOccurrences(of: "_", with: "-") }
            if environment["TRANSFERD_" + key.uppercased()] != nil { return "the environment (TRANSFERD_\(key.uppercased()))" }
            return path ?? "the defaults"
        }
        func int(_ key: String, _ fallback: Int, _ range: ClosedRange<Int>) throws -> Int {
            guard let value = reader.int(forKey: ConfigKey(key)) else {
                if present(key) {
                    throw ConfigurationError(description: "\(key) in \(source(key)) must be an integer in \(range.lowerBound)...\(range.upperBound)")
                }
                return fallback
            }
            guard range.contains(value) else {
                throw ConfigurationError(description: "\(key) in \(source(key)) is \(value): it must be in \(range.lowerBound)...\(range.upperBound)")
            }
            return value
        }
        func string(_ key: String, _ fallback: String, valid: (String) -> Bool, expected: String) throws -> String {
            guard let value = reader.string(forKey: ConfigKey(key)) else {
                if present(key) { throw ConfigurationError(description: "\(key) in \(source(key)) must be a string: \(expected)") }
                return fallback
            }
            guard valid(value) else { throw ConfigurationError(description: "\(key) in \(source(key)) is '\(value)': expected \(expected)") }
            return value
        }
        /// A list: a JSON array of strings, or comma-separated in the environment.
        func strings(_ key: String, valid: (String) -> Bool, expected: String) throws -> [String] {
            if flags[key] == nil, let raw = environment["TRANSFERD_" + key.uppercased()], raw.trimmingCharacters(in: .whitespaces).isEmpty {
                return []
            }
            guard let values = reader.stringArray(forKey: ConfigKey(key)) else {
                if present(key) {
                    throw ConfigurationError(description: "\(key) in \(source(key)) must be an array of strings (comma-separated in the environment): \(expected)")
                }
                return []
            }
            let entries = values.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            if let invalid = entries.first(where: { !valid($0) }) {
                throw ConfigurationError(description: "\(key) in \(source(key)) holds '\(invalid.prefix(100))': expected \(expected)")
            }
            return entries
        }
        /// The directories downloads may land in: each an absolute path without `.` or `..`.
        func roots(_ key: String, _ fallback: [String]) throws -> AllowedRoots {
            let values: [String]
            if let value = reader.stringArray(forKey: ConfigKey(key)) {
                values = value
            } else if present(key) {
                throw ConfigurationError(
                    description: "\(key) in \(source(key)) must be a list of absolute directory paths (in the environment: separated by commas)")
            } else {
                values = fallback
            }
            guard !values.isEmpty else {
                throw ConfigurationError(description: "\(key) in \(source(key)) is empty: name at least one directory downloads may land in, such as /srv/transferd")
            }
            if let bad = values.first(where: { AllowedRoots.normalize($0) == nil }) {
                throw ConfigurationError(
                    description: "\(key) in \(source(key)) holds '\(bad.prefix(200))': each entry must be an absolute path without . or .. components")
            }
            let setting: String
            if flags[key] == nil, environment["TRANSFERD_" + key.uppercased()] != nil {
                setting = "TRANSFERD_\(key.uppercased()) (comma-separated)"
            } else {
                setting = "\(key) in \(path ?? defaultFile)"
            }
            return AllowedRoots(values, setting: setting)
        }
        var config = DaemonConfiguration()
        config.allowedRoots = try roots("allowed_roots", defaultAllowedRoots(role: role, environment: environment))
        config.maxConcurrentTransfers = try int("max_concurrent_transfers", config.maxConcurrentTransfers, 1...1024)
        config.maxConnectionsPerHost = try int("max_connections_per_host", config.maxConnectionsPerHost, 1...1024)
        config.segments = try int("segments", config.segments, Limits.Job.segments)
        config.finishedJobRetentionSeconds = try int("finished_job_retention_seconds", config.finishedJobRetentionSeconds, 0...(10 * 365 * 86400))
        config.checkpointBytes = try int("checkpoint_bytes", config.checkpointBytes, (64 << 10)...(1 << 34))
        config.checkpointIntervalSeconds = try int("checkpoint_interval_seconds", config.checkpointIntervalSeconds, 1...3600)
        config.idleTimeoutSeconds = try int("idle_timeout_seconds", config.idleTimeoutSeconds, 1...86400)
        config.shutdownTimeoutSeconds = try int("shutdown_timeout_seconds", config.shutdownTimeoutSeconds, 1...3600)
        config.maxConnections = try int("max_connections", config.maxConnections, 1...65536)
        config.retentionSweepSeconds = try int("retention_sweep_seconds", config.retentionSweepSeconds, 1...86400)
        config.retryMaxAttempts = try int("retry_max_attempts", config.retryMaxAttempts, 1...1_000_000)
        config.retryMaxTimeSeconds = try int("retry_max_time_seconds", config.retryMaxTimeSeconds, 1...(10 * 365 * 86400))
        config.retryInitialDelaySeconds = try int("retry_initial_delay_seconds", config.retryInitialDelaySeconds, 0...86400)
        config.retryMaxDelaySeconds = try int("retry_max_delay_seconds", config.retryMaxDelaySeconds, 1...(7 * 86400))
        config.lowSpeedBytesPerSecond = try int("low_speed_bytes_per_second", config.lowSpeedBytesPerSecond, 0...(1 << 40))
        config.lowSpeedSeconds = try int("low_speed_seconds", config.lowSpeedSeconds, 1...86400)
        // FoundationNetworking gives up after 20 redirects whatever is configured.
        config.maxRedirects = try int("max_redirects", config.maxRedirects, 0...20)
        config.diskReserveBytes = try int("disk_reserve_bytes", config.diskReserveBytes, 0...(1 << 50))
        config.eventRetentionSeconds = try int("event_retention_seconds", config.eventRetentionSeconds, 0...(10 * 365 * 86400))
        config.subscriberQueueEvents = try int("subscriber_queue_events", config.subscriberQueueEvents, 1...1_000_000)
        config.maxSubscriptionsPerConnection = try int("max_subscriptions_per_connection", config.maxSubscriptionsPerConnection, 1...4096)
        config.subscriberQueueBytesPerUser = try int("subscriber_queue_bytes_per_user", config.subscriberQueueBytesPerUser, (64 << 10)...(1 << 30))
        config.subscriberQueueBytesTotal = try int("subscriber_queue_bytes_total", config.subscriberQueueBytesTotal, (1 << 20)...(1 << 34))
        config.controlIdleTimeoutSeconds = try int("control_idle_timeout_seconds", config.controlIdleTimeoutSeconds, 1...86400)
        config.rootReservedConnections = try int("root_reserved_connections", config.rootReservedConnections, 0...1024)
        config.hooks = hooks
        config.uploadSpoolBytesPerUser = try int("upload_spool_bytes_per_user", config.uploadSpoolBytesPerUser, 0...(1 << 50))
        config.uploadSpoolBytesTotal = try int("upload_spool_bytes_total", config.uploadSpoolBytesTotal, 0...(1 << 50))
        config.uploadResponseBodyBytes = try int("upload_response_body_bytes", config.uploadResponseBodyBytes, 0...(16 << 20))
        config.maxRequestBytes = try int("max_request_bytes", config.maxRequestBytes, 1024...(64 << 20))
        config.maxConnectionsPerUser = try int("max_connections_per_user", config.maxConnectionsPerUser, 1...65536)
        config.maxJobsPerUser = try int("max_jobs_per_user", config.maxJobsPerUser, 1...10_000_000)
        config.metricsMaxConnections = try int("metrics_max_connections", config.metricsMaxConnections, 1...1024)
        config.metricsIdleTimeoutSeconds = try int("metrics_idle_timeout_seconds", config.metricsIdleTimeoutSeconds, 1...3600)
        config.maxUploadHandoffsPerUser = try int("max_upload_handoffs_per_user", config.maxUploadHandoffsPerUser, 1...UploadHandoffServer.maxOpenHandoffs)
        config.uploadHandoffTimeoutSeconds = try int("upload_handoff_timeout_seconds", config.uploadHandoffTimeoutSeconds, 1...300)
        config.journalBytesPerUser = try int("journal_bytes_per_user", config.journalBytesPerUser, (64 << 10)...(1 << 40))
        config.inboxBytesPerUser = Int64(try int("inbox_bytes_per_user", Int(config.inboxBytesPerUser), (1 << 20)...(1 << 50)))
        config.uploadSpoolFilesPerUser = try int("upload_spool_files_per_user", config.uploadSpoolFilesPerUser, 1...1_000_000)
        // The request object and its params are two levels; no request of the protocol needs more than four.
        config.maxJsonDepth = try int("max_json_depth", config.maxJsonDepth, 4...512)
        guard config.rootReservedConnections < config.maxConnections else {
            throw ConfigurationError(
                description: "root_reserved_connections (\(config.rootReservedConnections)) must be below max_connections (\(config.maxConnections)): "
                    + "lower it or raise max_connections")
        }
        config.socketMode = try string(
            "socket_mode", config.socketMode,
            valid: { mode_t($0, radix: 8).map { $0 & ~0o770 == 0 && $0 & 0o600 == 0o600 } ?? false },
            expected: "an octal mode no wider than 0770 that lets the owner read and write, such as \"0660\" or \"0600\"")
        config.logLevel = try string(
            "log_level", config.logLevel, valid: { Logger.Level(rawValue: $0) != nil },
            expected: "one of trace, debug, info, notice, warning, error, critical")
        let hostEntry = "host names, *.domain patterns, IP addresses or CIDR ranges, such as \"example.com\", \"*.example.com\", \"10.0.0.0/8\" or \"fd00::/8\""
        config.allowedHosts = try strings("allowed_hosts", valid: { HostRule($0) != nil }, expected: hostEntry)
        config.deniedHosts = try strings("denied_hosts", valid: { HostRule($0) != nil }, expected: hostEntry)
        config.localAddresses = try string(
            "local_addresses", config.localAddresses, valid: { ["auto", "allow", "deny"].contains($0) },
            expected: "\"auto\" (deny for the system service, allow for a user's own daemon), \"allow\" or \"deny\"")
        let group = "an existing group's name or a gid (the daemon's user must be a member, unless it runs as root), or \"\" for the daemon's own group"
        if reader.string(forKey: ConfigKey("socket_group")) == nil, let gid = reader.int(forKey: ConfigKey("socket_group")) {
            // A gid written as a JSON number.
            guard gid >= 0, SocketGroup.id(String(gid)) != nil else {
                throw ConfigurationError(description: "socket_group in \(source("socket_group")) is \(gid): expected \(group)")
            }
            config.socketGroup = String(gid)
        } else {
            config.socketGroup = try string("socket_group", config.socketGroup, valid: { SocketGroup.id($0) != nil }, expected: group)
        }
        for key in ["max_rate", "background_max_rate"] {
            let raw: Any? = reader.string(forKey: ConfigKey(key)) ?? reader.int(forKey: ConfigKey(key)).map { $0 as Any }
            guard let raw else {
                if present(key) {
                    throw ConfigurationError(description: "\(key) in \(source(key)) must be a rate: bytes per second with an optional K, M or G suffix, e.g. \"4M\"")
                }
                continue
            }
            let rate = try rate(raw, key: key, source: source(key))
            if key == "max_rate" { config.maxRate = rate } else { config.backgroundMaxRate = rate }
        }
        config.rateWindows = rateWindows
        config.clientCertificates = clientCertificates
        config.caFile = try string(
            "ca_file", "", valid: { $0.isEmpty || $0.hasPrefix("/") }, expected: "the absolute path of a PEM file of CA certificates, or \"\"")
        config.metricsListen = try string(
            "metrics_listen", config.metricsListen, valid: { $0.isEmpty || MetricsListenAddress($0) != nil }, expected: MetricsListenAddress.expected)
        // Not echoed when refused: a proxy's URL may hold its password.
        for key in ["http_proxy", "https_proxy"] {
            let value = reader.string(forKey: ConfigKey(key)) ?? ""
            guard Proxies.isValid(value) else {
                throw ConfigurationError(description: "\(key) in \(source(key)) is not a proxy: \(Proxies.expected)")
            }
            if key == "http_proxy" { config.httpProxy = value } else { config.httpsProxy = value }
        }
        config.noProxy = try string("no_proxy", "", valid: { !$0.contains(where: \.isNewline) }, expected: "comma-separated host names, domains and addresses")
        return (config, path)
    }
}
