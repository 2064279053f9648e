print("transferctl")
