import ArgumentParser
import HaulService
import NIOCore
import NIOPosix

/// hauld's entry: Swift concurrency runs on NIO's event loops, which async-http-client uses anyway.
///
/// On Linux the default global executor is libdispatch's pool, whose monitor wakes the process every second once
/// any job has run there, for as long as the process lives. On NIO's loops an idle hauld has no timer that repeats
/// (its own timers use `EventLoopClock`), and a transfer's delegate and the service's actors need no thread hop between
/// them. It must happen before the first task is created, hence before the command runs.
@main
enum HauldMain {
    static func main() async {
        // Before much is allocated: memory that comes back after a load (`MallocTuning`).
        MallocTuning.apply()
        let installed = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        // Without it hauld still works, with libdispatch's pool and its 1 Hz wake-ups.
        if !installed {
            StderrLogHandler.write("hauld: Swift concurrency stays on libdispatch's pool\n")
        }
        await Hauld.main()
    }
}
