from reader.entry import main

main()
