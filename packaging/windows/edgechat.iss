; Inno Setup script for EdgeChat (per-user install, no admin rights). Built by the CI workflow
; (.github/workflows/build.yml) after packaging/build.sh:
;   iscc /DAppVersion=0.1.0 /DDist=..\..\dist packaging\windows\edgechat.iss
#ifndef AppVersion
  #define AppVersion "0.1.0"
#endif
#ifndef Dist
  #define Dist "..\..\dist"
#endif

[Setup]
AppId={{6F1D2B9A-3C57-4E8B-9B0E-ED6EC4A7C0A1}
AppName=EdgeChat
AppVersion={#AppVersion}
AppPublisher=EdgeChat
DefaultDirName={localappdata}\Programs\EdgeChat
DefaultGroupName=EdgeChat
PrivilegesRequired=lowest
OutputDir={#Dist}
OutputBaseFilename=EdgeChat-{#AppVersion}-windows-x64-setup
Compression=lzma2/max
SolidCompression=yes
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
UninstallDisplayIcon={app}\edgechat.exe
WizardStyle=modern

[Files]
Source: "{#Dist}\EdgeChat\*"; DestDir: "{app}"; Flags: recursesubdirs ignoreversion

[Icons]
Name: "{group}\EdgeChat"; Filename: "{app}\edgechat.exe"
Name: "{userdesktop}\EdgeChat"; Filename: "{app}\edgechat.exe"; Tasks: desktopicon

[Tasks]
Name: "desktopicon"; Description: "Create a desktop shortcut"; Flags: unchecked

[Run]
Filename: "{app}\edgechat.exe"; Description: "Start EdgeChat"; Flags: nowait postinstall skipifsilent
