// The PushPostgres module; see DESIGN.md "Suggested targets".
