import TransferProtocol

extension DaemonConfiguration {
    /// This configuration with the keys a reload applies at once taken from `new`. The others are
    /// fixed while the daemon runs (the engine's settings are read once, when its `URLSession` is
    /// created) and change at the next start.
    package func applyingLiveKeys(from new: DaemonConfiguration) -> DaemonConfiguration {
        var applied = self
        applied.maxConcurrentTransfers = new.maxConcurrentTransfers
        applied.maxConnectionsPerHost = new.maxConnectionsPerHost
        applied.segments = new.segments
        applied.finishedJobRetentionSeconds = new.finishedJobRetentionSeconds
        applied.retentionSweepSeconds = new.retentionSweepSeconds
        applied.logLevel = new.logLevel
        applied.shutdownTimeoutSeconds = new.shutdownTimeoutSeconds
        applied.maxConnections = new.maxConnections
        applied.socketMode = new.socketMode
        applied.socketGroup = new.socketGroup
        // Host rules are checked at every submit, attempt and redirect.
        applied.allowedHosts = new.allowedHosts
        applied.deniedHosts = new.deniedHosts
        applied.localAddresses = new.localAddresses
        // Retry limits, the idle timeout and the disk reserve are read by the core per attempt.
        applied.idleTimeoutSeconds = new.idleTimeoutSeconds
        applied.retryMaxAttempts = new.retryMaxAttempts
        applied.retryMaxTimeSeconds = new.retryMaxTimeSeconds
        applied.retryInitialDelaySeconds = new.retryInitialDelaySeconds
        applied.retryMaxDelaySeconds = new.retryMaxDelaySeconds
        applied.lowSpeedBytesPerSecond = new.lowSpeedBytesPerSecond
        applied.lowSpeedSeconds = new.lowSpeedSeconds
        applied.diskReserveBytes = new.diskReserveBytes
        // Read per subscription, per sweep and per finished job.
        applied.eventRetentionSeconds = new.eventRetentionSeconds
        applied.subscriberQueueEvents = new.subscriberQueueEvents
        applied.maxSubscriptionsPerConnection = new.maxSubscriptionsPerConnection
        applied.subscriberQueueBytesPerUser = new.subscriberQueueBytesPerUser
        applied.subscriberQueueBytesTotal = new.subscriberQueueBytesTotal
        applied.controlIdleTimeoutSeconds = new.controlIdleTimeoutSeconds
        applied.rootReservedConnections = new.rootReservedConnections
        applied.hooks = new.hooks
        // Read per connection (request size, connections) and per submit (jobs).
        applied.maxRequestBytes = new.maxRequestBytes
        applied.maxConnectionsPerUser = new.maxConnectionsPerUser
        applied.maxJobsPerUser = new.maxJobsPerUser
        applied.journalBytesPerUser = new.journalBytesPerUser
        applied.inboxBytesPerUser = new.inboxBytesPerUser
        applied.maxJsonDepth = new.maxJsonDepth
        // Read at each submit and each transfer start; running transfers keep the directory they opened.
        applied.allowedRoots = new.allowedRoots
        // Read at each hand-off of a file to upload.
        applied.uploadSpoolBytesPerUser = new.uploadSpoolBytesPerUser
        applied.uploadSpoolBytesTotal = new.uploadSpoolBytesTotal
        applied.maxUploadHandoffsPerUser = new.maxUploadHandoffsPerUser
        applied.uploadHandoffTimeoutSeconds = new.uploadHandoffTimeoutSeconds
        // Read at each connection the metrics listener accepts.
        applied.metricsMaxConnections = new.metricsMaxConnections
        applied.metricsIdleTimeoutSeconds = new.metricsIdleTimeoutSeconds
        applied.uploadSpoolFilesPerUser = new.uploadSpoolFilesPerUser
        // Read by each running transfer after each segment.
        applied.maxRate = new.maxRate
        applied.backgroundMaxRate = new.backgroundMaxRate
        applied.rateWindows = new.rateWindows
        // Read at each request's start (and redirect).
        applied.httpProxy = new.httpProxy
        applied.httpsProxy = new.httpsProxy
        applied.noProxy = new.noProxy
        // Read at each request's start: the CA certificates and client certificates.
        applied.caFile = new.caFile
        applied.clientCertificates = new.clientCertificates
        return applied
    }

    /// The keys whose values differ between `old` and `new`, in declaration order. Derived from the
    /// stored properties, so a key added later is covered without a change here: a property's key
    /// is its name in snake_case (`maxConcurrentTransfers` is `max_concurrent_transfers`).
    package static func changedKeys(from old: DaemonConfiguration, to new: DaemonConfiguration) -> [String] {
        zip(Mirror(reflecting: old).children, Mirror(reflecting: new).children).compactMap { before, after in
            guard let label = before.label, "\(before.value)" != "\(after.value)" else { return nil }
            return label.snakeCased
        }
    }
}
