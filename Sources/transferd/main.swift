print("transferd")
