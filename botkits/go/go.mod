module arena-botkit

go 1.22
