import ArgumentParser

@main
struct Haul: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "haul",
        abstract: "Control hauld, the Haul transfer and network-activity daemon, over D-Bus.",
        discussion: """
            Exit status: 0 success; 1 the daemon refused, or the transfer failed; 2 the transfer was cancelled \
            (by `haul cancel` or another client); 64 usage error; 69 hauld or the session bus cannot be reached, \
            or hauld left the bus while haul followed a transfer (the transfer is saved); 130 detached with Ctrl-C \
            (the transfer goes on). `haul busy` exits with its command's status.
            """,
        subcommands: [
            GetCommand.self, PutCommand.self, ListCommand.self, SuspendCommand.self, ResumeCommand.self,
            RetryCommand.self, CancelCommand.self, ForgetCommand.self, WatchCommand.self, StatusCommand.self,
            IndicatorCommand.self, BusyCommand.self, MonitorCommand.self, LimitCommand.self,
        ]
    )
}
