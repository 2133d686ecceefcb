"""Question-side stopwords: function words and interrogatives, per language.

Only questions drop these words; chunks keep every word. A stopword is never a question's
content word, so it needs no prefix key and no form-map entry on the chunk side either.

Lists are written as spelled (lower case, with diacritics) and compared after ``unaccent``
(see ``rag.language.keys``), so "Kdo", "KDO" and "kdo" or "jaký" and "jaky" are all the same stopword.
Because the comparison ignores diacritics, a word whose unaccented form is a common content
word is left out on purpose: Czech "být" (unaccented "byt", a flat), "tom" (also the name Tom),
the particles "spíš" (spis, a file), "právě" (pravé, right), "stále" (stálé, permanent), "pořád"
(porad, of meetings) and "ovšem" (ovsem, with oats), English "may" (the month). Czech lists its
particles of degree, frequency and attitude ("aspoň", "jenom", "asi", "prý", "téměř"): they say
how the question is meant, never what a passage is about; so are the indefinite and negative
pronouns ("nějaké", "některý", "žádný", as "někdo" and "nic"), which stand for something the
question does not name; so are the demonstratives in every case, the spoken "tohle" and
"tenhle", "tamten", "onen" and "takový" as "tento" ("Kdo dostal tohle ocenění?" asks for the
award the question has named or implies, never for the word), the possessives in every case
("svém", "našich"), and the pronominal adverbs of the same classes ("nijak", "nikde",
"jinde"), the secondary prepositions ("ohledně", "uvnitř", "vůči"; not "kolem", "pomocí" or
"mimo", which are also content words or bound a time) and the adverbs of degree and earlier time
("zcela", "příliš", "dříve"; not "úplně", "částečně" or "poměrně", which unaccented are the
adjectives úplné, částečné and poměrné). "aby" and "kdyby" are listed in
every person ("abych", "kdybychom"), since the conditional's clitic is written into the
conjunction. Every conjunction is listed, subordinating ("protože", "ačkoli", "zatímco",
"jakmile"; German "weil", "obwohl", "nachdem"; Russian "потому", "поскольку") and coordinating
("avšak", "jenže"; "sondern", "jedoch"; "однако", "зато"), with the connective adverbs that do a
conjunction's work ("proto", "tudíž", "nicméně"; "deshalb", "trotzdem"; "поэтому"): they join
what a question says, and no passage is about them. So is the emphatic pronoun "sám" ("Můžu na
věž sám?"): it says who, as a pronoun does; and the personal and reflexive pronouns are listed in
every case, the forms after a preposition included ("za námi", "s sebou", "pro něj"), except
"ně", which unaccented is the particle "ne". So is "jeden" in every case: a question's "one"
counts its noun once ("Kolik stojí jedna krabice?", "Kolik dětí je v jednom oddělení?", "jeden
z autorů"), which a passage says by the noun alone or by "každý"; the count rule still reads
it (answerability._counts). Unaccented, "jedna" is also "jedná", whose commonest use, "jedná
se o", frames a question as "být" does. So are the pronouns of totality and of both
("všechno", "oba"; German "alle", "jede", "beide", "andere" with the possessives in every case
form, "seine", "ihrer", and the relative "denen", "dessen"; Russian "весь", "каждый", "оба"),
and the German prepositions ("zwischen", "neben", "seit", "wegen"; not "ab", which is also the
particle of a separable verb: "fing ... ab"). Not the adverbs of frequency ("často", "oft",
"часто": "Jak často ...?" asks for one) nor the words of a superlative ("die meisten", "самый",
"наиболее"), which restrict what is asked as Czech "nej-" does inside its word. Russian lists
the same classes:
every case form of the possessive, indefinite and "other" pronouns ("своей", "некоторые",
"каких-то", "другие"), the particles and adverbs of time and degree ("снова", "впервые",
"тоже", "почти") and the prepositions ("против", "после", "согласно"); German its
approximations ("etwa", "rund"), the demonstratives "dieser", "jener" and "solche" as the
articles, "manche", "weitere", the pronominal adverbs ("davon", "dafür") and "statt", which
is a preposition or the particle a verb leaves behind ("Wann fand ... statt?": stattfinden, a
frame word). Every case form of the interrogative pronouns is
listed, because the lemmatizer is not consulted here: a lemma-based check would inherit its
mistakes. Czech lists the spoken forms too ("jakej", "kterej", "kerej"): chat questions are
written as people talk.

Languages without a list here simply have no stopwords (every word is a content word).
"""

from __future__ import annotations

_CS = """
kdo koho komu kom kým kdopak
co čeho čemu čem čím copak
kdy kde kam odkud kudy dokdy odkdy proč nač zač kdepak pročpak jakpak
jak jaký jaká jaké jakého jakému jakém jakým jakou jací jakých jakými
který která které kterého kterému kterém kterým kterou kteří kterých kterými
jakej jakýho jakýmu jakejch jakejma kterej kterýho kterýmu kterejch kerej kerá keré kerou kerýho
čí čího čímu čích čími
kolik kolika kolikrát kolikátý kolikátá kolikáté kolikátého kolikátém
a i nebo ani ale však či aby když pokud jestli zda li že jako než
abych abys abychom abyste kdyby kdybych kdybys kdybychom kdybyste
sám sama samo sami samy
je jsou jsem jsi jsme jste byl byla bylo byli byly bude budou by bych bys bychom byste
má mají měl měla mělo měli lze může mohou
se si sebe sobě svůj svá své svého svému svém svým svou svoji svoje svých svými
ten ta to ti ty té toho tomu tím těch těm těmi tu tou tato tento toto tyto tito této tohoto
tomto tímto
tenhle tahle tohle tihle tyhle téhle tohohle tomuhle tomhle tímhle těchhle těmhle těmahle tuhle
touhle tamten tamta tamto tamti tamty tamtoho tamtomu tamtom tamtím tamtu tamtou tamtěch tamtěm
onen onoho onomu onom oním onu onou oněch oněm
takový taková takové takového takovému takovém takovým takovou takoví takových takovými takovej
tolik
on ona ono oni ony jeho její jejich jemu ji jí jim ho mu mi mě mně my vy nám vám nás vás
já ty mne mnou tebe tě tobě tebou jej něho něj němu ním jím něm ní námi vámi jich nich nim jimi
nimi sebou
v ve na do od po za z ze s u o k ke ku pro při před přes pod nad mezi bez kromě podle během
proti kvůli
už již jen také též taky tak tam tady zde ještě velmi více
prosím řekni řekněte víš víte vím
někdo někoho někomu někom někým něco něčeho něčemu něčem něčím nikdo nikoho nikomu nic ničeho
jiný jiná jiné jiného jinému jiném jiným jinou jiní jiných
nějaký nějaká nějaké nějakého nějakému nějakém nějakým nějakou nějací nějakých nějakými
některý některá některé některého některému některém některým některou někteří některých
žádný žádná žádné žádného žádnému žádném žádným žádnou žádní žádných
můj moje mého mému mém mým mou moji mých mými mí mé
tvůj tvá tvé tvoje tvého tvému tvém tvým tvou tvoji tvých tvými
náš naše našeho našemu našem naším naši našich našim našimi naší
váš vaše vašeho vašemu vašem vaším vaši vašich vašim vašimi vaší
teď nyní hned pak potom nejdřív nejdříve vůbec nějak někdy
mám máš máme máte můžu můžeš můžeme můžete mohu
aspoň alespoň jenom pouze až asi prý snad hlavně zejména třeba dokonce zrovna zase opět vždy
vždycky tedy totiž vlastně skoro téměř zhruba přibližně
nijak nikde nikdy nikam odnikud někde někam odněkud jinak jinde jindy všude
ohledně uvnitř vně okolo vedle naproti oproti vůči včetně dle skrz prostřednictvím
zčásti zcela naprosto docela příliš dříve dřív předtím
ačkoli ačkoliv přestože třebaže jelikož protože neboť poněvadž zatímco jestliže aniž dokud jakmile
kdežto avšak nicméně jenže tudíž proto zdali
všechno všichni vše oba obě
jeden jedna jedno jednoho jedné jednomu jednom jedním jednu jedni jedny jedněch jedněm jedněmi
"""

_SK = """
kto koho komu kom kým
čo čoho čomu čom čím
kedy kde kam odkiaľ kadiaľ prečo načo
ako aký aká aké akého akému akom akým akou akí akých akými
ktorý ktorá ktoré ktorého ktorej ktorému ktorom ktorým ktorou ktorí ktorých ktorými
čí čia čie čieho čej čiemu čiu čiou čích čími
koľko koľkokrát
a aj ale alebo ani že aby keď ak či ako než
je sú som si sme ste bol bola bolo boli budú bude by
má majú mal mala malo mali možno môže
sa seba sebe svoj svoja svoje svojho
ten tá to tí tie toho tomu tým tých tou tú táto tento toto tieto
on ona ono oni ony jeho jej ich jemu mu mi ma mňa mne my vy nám vám nás vás ja ty
v vo na do od po za z zo s so u o k ku pre pri pred cez pod nad medzi bez okrem podľa počas
proti
už len tiež ešte veľmi tak tam tu
prosím povedz
"""

_PL = """
kto kogo komu kim
co czego czemu czym
kiedy gdzie dokąd skąd dlaczego
jak jaki jaka jakie jakiego jakiej jakiemu jakim jaką jacy jakich jakimi
który która które którego której któremu którym którą którzy których którymi
czyj czyja czyje czyjego czyjej czyjemu czyim czyją czyich
ile ilu czy
i a ale lub albo oraz ani że aby żeby gdy jeśli niż jako
jest są jestem jesteś jesteśmy był była było byli były będzie będą
ma mają miał miała można może
się siebie sobie swój swoja swoje swojego
ten ta to te tego temu tym tej tą tych ci tę tamten
on ona ono oni one jego jej ich go mu mi mnie my wy nam wam nas was ja ty
w we na do od po za z ze u o przez przy przed pod nad dla bez między według podczas
nie tak też także już tylko jeszcze bardzo tu tam
proszę powiedz
"""

_DE = """
wer wen wem wessen was wann wo woher wohin warum weshalb wieso weswegen wie wieviel
wofür womit wovon wozu worauf woran worin worüber wodurch wogegen worum wonach woraus wobei
wovor
welcher welche welches welchem welchen
der die das den dem des ein eine einer eines einem einen kein keine keinen
dieser diese dieses diesem diesen jener jene jenes jenem jenen solcher solche solches solchem
solchen
und oder aber dass ob wenn als
ist sind war waren wird werden wurde wurden hat haben hatte hatten sein bin bist seid
es er sie wir ihr ich du man sich
in im ins an am auf aus bei beim mit nach von vom zu zum zur für über unter vor durch gegen
ohne um
nicht auch noch schon nur sehr so da hier dort gibt viele viel
zuerst insgesamt etwa ungefähr rund schätzungsweise statt überhaupt typischerweise normalerweise
manche mancher manchen manchem manches weitere weiteren weiterer weiteres
dabei dafür dagegen daher dahin damit danach daran darauf daraus darin darüber davon dazu
obwohl weil während falls sobald solange bevor nachdem sondern jedoch deshalb darum trotzdem also
zwar sowie sowohl weder denn
mein meine meinen meiner meinem meines dein deine deinen deiner deinem deines sein seine seinen
seiner seinem seines ihre ihren ihrer ihrem ihres unser unsere unseren unserer unserem unseres
euer eure euren eurer eurem eures
andere anderen anderer anderes anderem beide beiden beider beides alle allen aller alles jede
jeder jedes jeden jedem denen dessen deren
bis zwischen neben seit wegen trotz außer innerhalb außerhalb hinter gegenüber
bitte
"""

_RU = """
кто кого кому кем ком
что чего чему чем чём
когда где куда откуда почему зачем
как какой какая какое какие какого какому каким каком какую каких какими
который которая которое которые которого которой которому котором которую которым
которых которыми
чей чья чьё чьи чьего чьей чьему чьим чьих
сколько ли такой такая такое такие
и а но или что чтобы если чем как
есть был была было были будет будут быть
может можно
каков какова каково каковы
себя себе собой свой своя своё свои своего своей своему своим своём своем свою своих своими
это этот эта эти этого этой этому этим том тот та те то того той тем тех
он она оно они его её ее их ему ей им ими нему ней ним них мне меня мы вы нам вам нас вас я ты
мой моя моё мои моего моей моих наш наша наше наши нашего нашей наших
ваш ваша ваше ваши вашего вашей ваших
другой другая другое другие другого другому другим другом другую других другими
некоторый некоторая некоторое некоторые некоторого некоторой некоторым некоторых некоторыми
какой-то какая-то какое-то какие-то какого-то каких-то кто-то что-то где-то когда-то
в во на с со к ко по о об обо от до из за у для при про под над без через между
против после перед среди вокруг кроме вместо около благодаря согласно вне внутри вдоль возле
не ни же бы уже ещё еще только очень так там тут здесь
да нет тоже также даже лишь почти именно вообще снова опять вновь впервые
теперь сейчас тогда потом затем сначала пока хотя либо
потому поэтому поскольку ибо однако зато причём причем притом
весь вся всё все всего всей всему всем всём всю всех всеми каждый каждая каждое каждые каждого
каждой каждому каждым каждом каждую каждых оба обе обоих помимо
насколько скольких скольким сколькими
пожалуйста скажи скажите
"""

_EN = """
who whom whose what which when where why how
the a an of in on at to for from by with about into over under between during without
and or but not no nor if than that this these those
is are was were be been being am do does did has have had can could would should will
shall might must
it its he she they them his her their i me my we us our you your there here
many much please tell
"""

# Spelled as written; rag.language.keys compares them after unaccent().
STOPWORDS: dict[str, frozenset[str]] = {
    lang: frozenset(words.split())
    for lang, words in {
        "cs": _CS,
        "sk": _SK,
        "pl": _PL,
        "de": _DE,
        "ru": _RU,
        "en": _EN,
    }.items()
}
